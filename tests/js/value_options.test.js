// Value options of get/toArray in Node (see tests/js/lib/value_options.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as arrow from 'apache-arrow';
import * as quiver from 'quiver-arrow';
import { valueOptionTests } from './lib/value_options.js';

valueOptionTests({ test, assert, quiver, arrow });
