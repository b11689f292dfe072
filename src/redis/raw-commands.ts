/**
 * Scripts and commands as raw arguments, for the clients whose scripts hotcount cannot define up
 * front (node-redis takes scripts only when a client is made; valkey-glide's are glide's own
 * objects): EVALSHA with the keys and the arguments flattened, turned into EVAL once when Redis
 * does not have the script (NOSCRIPT, as after a restart or SCRIPT FLUSH).
 */
import type { RedisArgument, RedisScript } from './client.js';

/** An argument as a client sends it: numbers as their decimal text. */
export type RawArgument = string | Buffer;

/** EVALSHA `script` with `keys` and `args` (arrays flattened), as one command's arguments. */
export function evalSha(
  script: RedisScript,
  keys: readonly string[],
  args: readonly RedisArgument[],
): RawArgument[] {
  const command: RawArgument[] = ['EVALSHA', script.sha, String(keys.length)];
  for (const key of keys) command.push(key);
  for (const arg of args) {
    if (typeof arg === 'object' && !Buffer.isBuffer(arg)) {
      for (const item of arg) command.push(String(item));
    } else {
      command.push(typeof arg === 'number' ? String(arg) : arg);
    }
  }
  return command;
}

/** Whether `error` is Redis's NOSCRIPT, as each client words it. */
export function isNoScript(error: unknown): boolean {
  return /^NOSCRIPT|NoScriptError/.test((error as Error)?.message ?? '');
}

/** The same command as EVAL, with the script's source (after NOSCRIPT). */
export function asEval(command: RawArgument[], script: RedisScript): RawArgument[] {
  command[0] = 'EVAL';
  command[1] = script.lua;
  return command;
}

/** A command on one key, as its arguments. */
export function onKey(
  command: string,
  key: string,
  args: readonly (string | number)[],
): RawArgument[] {
  const sent: RawArgument[] = [command, key];
  for (const arg of args) sent.push(String(arg));
  return sent;
}
