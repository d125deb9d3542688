#!/usr/bin/env node
// npm run fsx -- [--ops N] [--cipher all|NAME,...] [--seed N] [--runs K] [--impl tscryptfs|gocryptfs] [--replay FILE] [--all]
// The long run of the random-operation tester; the engine lives in
// test/helpers/fsx/ (compiled to dist/ by `npm run fsx`). See README.md.
import { main } from '../dist/test/helpers/fsx/cli.js';

process.exitCode = await main(process.argv.slice(2));
