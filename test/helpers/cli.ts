/** Runs the built `hotcount` command as a user would: a child process, real stdio. */
import { type SpawnSyncOptions, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

export interface Result {
  status: number | null;
  stdout: string;
  stderr: string;
}

export function hotcount(
  args: string[],
  input?: string | Uint8Array,
  options: SpawnSyncOptions = {},
): Result {
  const result = spawnSync(process.execPath, [CLI, ...args], { input, ...options });
  return {
    status: result.status,
    stdout: result.stdout?.toString() ?? '',
    stderr: result.stderr?.toString() ?? '',
  };
}

/** A bash command line, with `$HOTCOUNT` standing for the command. */
export function bash(script: string, input?: string): Result {
  const result = spawnSync('bash', ['-c', script], {
    input,
    // Unquoted in the script, so the two words must hold no blank (they are paths we made).
    env: { ...process.env, HOTCOUNT: `${process.execPath} ${CLI}` },
  });
  return {
    status: result.status,
    stdout: result.stdout.toString(),
    stderr: result.stderr.toString(),
  };
}

export interface JsonRow {
  key: string;
  keyHex?: string;
  count: number;
  lowerBound: number;
  upperBound: number;
  share: number;
}

export interface JsonOutput {
  total: number;
  skipped: number;
  skippedBy: { emptyLines: number; noField: number; noDelimiter: number };
  top: JsonRow[];
}

/** `hotcount ... --json`, which must succeed, parsed. */
export function json(args: string[], input?: string | Uint8Array): JsonOutput {
  const result = hotcount([...args, '--json'], input);
  if (result.status !== 0) throw new Error(`exit ${result.status}: ${result.stderr}`);
  return JSON.parse(result.stdout);
}

/** A scratch folder of files for one test file. */
export function scratch(prefix: string): (name: string, content: string | Uint8Array) => string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return (name, content) => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };
}
