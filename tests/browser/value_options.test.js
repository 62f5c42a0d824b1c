// Value options of get/toArray in each engine (see tests/js/lib/value_options.js).
import { test, assert } from './harness.js';
import * as quiver from 'quiver-arrow';
import * as arrow from 'apache-arrow';
import { valueOptionTests } from '../js/lib/value_options.js';

valueOptionTests({ test, assert, quiver, arrow });
