export { ReverseView, REVERSE_CONF_NAME, type ReverseViewOptions, type ReverseViewOpenOptions } from './reverse-view.js';
export { ReverseFile } from './reverse-file.js';
export { Excluder } from './excluder.js';
export { InoMap } from './ino-map.js';
export { pathIV, fileIVs, blockIV, type PathIvPurpose, type FileIVs } from './pathiv.js';
