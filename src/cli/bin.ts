#!/usr/bin/env node
/** The `toolpath` executable. */
import { processIO } from './io.js';
import { main } from './main.js';

process.exitCode = await main(process.argv.slice(2), processIO());
