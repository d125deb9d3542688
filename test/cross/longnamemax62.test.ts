/** gocryptfs 2.3 <-> tscryptfs interoperability, variant: longnamemax62 (see test/helpers/cross-suite.ts). */
import { defineCrossSuite, VARIANTS } from '../helpers/cross-suite.js';

defineCrossSuite(VARIANTS.longnamemax62);
