/**
 * `toolpath serve` runs on packages the in-process use never loads (gRPC, protobuf, the OTLP and
 * Prometheus exporters, the metrics SDK). They are optional peer dependencies, so an app that only
 * judges in process or in CI does not install them; serve loads them here, and when one is missing
 * says which and prints the one command that installs them all.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TOOLPATH_ROOT } from './install-hint.js';

type ServeModule = typeof import('../collector/serve.js');

/** The optional peers serve needs, with the ranges toolpath's package.json gives them. */
export function servePackages(toolpathRoot = TOOLPATH_ROOT): string[] {
  try {
    const manifest = JSON.parse(readFileSync(join(toolpathRoot, 'package.json'), 'utf8')) as {
      peerDependencies?: Record<string, string>;
      peerDependenciesMeta?: Record<string, { optional?: boolean }>;
    };
    const meta = manifest.peerDependenciesMeta ?? {};
    return Object.entries(manifest.peerDependencies ?? {})
      .filter(([name]) => meta[name]?.optional === true && name !== 'vitest')
      .map(([name, range]) => `${name}@${range}`);
  } catch {
    return [];
  }
}

/** The service module, or the message saying what to install when a package it needs is missing. */
export async function loadServeModule(
  load: () => Promise<ServeModule> = () => import('../collector/serve.js'),
): Promise<ServeModule | string> {
  try {
    return await load();
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    if (code !== 'ERR_MODULE_NOT_FOUND') throw error;
    const missing = /Cannot find (?:package|module) '([^']+)'/.exec(message)?.[1] ?? 'a package';
    const install = servePackages()
      .map((spec) => `'${spec}'`)
      .join(' ');
    return (
      `toolpath serve: ${missing} is not installed: serve needs packages an in-process install of toolpath leaves out ` +
      `(optional peer dependencies, docs/packaging.md). Install them:\n  npm i ${install}\n`
    );
  }
}
