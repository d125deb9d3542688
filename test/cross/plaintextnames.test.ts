/** gocryptfs 2.3 <-> tscryptfs interoperability, variant: plaintextnames (see test/helpers/cross-suite.ts). */
import { defineCrossSuite, VARIANTS } from '../helpers/cross-suite.js';

defineCrossSuite(VARIANTS.plaintextnames);
