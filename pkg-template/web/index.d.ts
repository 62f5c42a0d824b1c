export * from './quiver.js';
export { default } from './quiver.js';
