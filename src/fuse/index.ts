export { mountVault, mountReverse, fuseOptionList, type MountOptions, type Mounted } from './mount.js';
export { loadFuse, FuseUnavailableError } from './fuse-native.js';
export { fuseDeviceProblem, fuseInfo, type FuseInfo } from './fuse-info.js';
