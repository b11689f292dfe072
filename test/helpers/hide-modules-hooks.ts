/** The resolve hook of hide-modules.ts: the hidden packages are not found. */
let hidden: string[] = [];

export function initialize(data: string[]): void {
  hidden = data;
}

export async function resolve(
  specifier: string,
  context: unknown,
  next: (specifier: string, context: unknown) => Promise<unknown>,
): Promise<unknown> {
  if (hidden.some((name) => specifier === name || specifier.startsWith(`${name}/`))) {
    throw Object.assign(new Error(`Cannot find package '${specifier}' (hidden by the test)`), {
      code: 'ERR_MODULE_NOT_FOUND',
    });
  }
  return next(specifier, context);
}
