/**
 * The one error format of every verb, on stderr:
 *
 *   tailswarm <verb>: <what went wrong, one line>
 *   hint: <what to do>                          (only where there is something to do)
 *
 * A verb throws `CliError` (its exit code and hint) or `UsageError` (args.ts: exit 2, hint the verb's
 * --help); `guard` runs the verb and prints either in that format. Anything else is main.ts's: exit 1,
 * same first line.
 */
import { TailswarmError } from "../errors.js";
import type { TailswarmErrorCode } from "../errors.js";
import { EXIT, UsageError } from "./args.js";

export class CliError extends TailswarmError {
  readonly exitCode: number;
  readonly hint: string | undefined;

  constructor(
    message: string,
    options: { exitCode: number; hint?: string; code?: TailswarmErrorCode; cause?: unknown },
  ) {
    super(options.code ?? "INTERNAL", message, options.cause === undefined ? {} : { cause: options.cause });
    this.name = "CliError";
    this.exitCode = options.exitCode;
    this.hint = options.hint;
  }
}

const oneLine = (text: string): string => text.replace(/\s*\n\s*/g, " ").trim();

/** Writes `tailswarm <verb>: <message>` and, when given, `hint: <hint>` to stderr. */
export function writeError(verb: string | undefined, message: string, hint?: string): void {
  const head = verb === undefined ? "tailswarm" : `tailswarm ${verb}`;
  process.stderr.write(
    `${head}: ${oneLine(message)}\n${hint === undefined ? "" : `hint: ${oneLine(hint)}\n`}`,
  );
}

/** The hint of a usage error that names none. */
export const helpHint = (verb: string): string => `run 'tailswarm ${verb} --help' for its options`;

/** Runs a verb's body; a CliError or UsageError it throws is printed in the one format and becomes the exit code. */
export async function guard(verb: string, body: () => Promise<number>): Promise<number> {
  try {
    return await body();
  } catch (error) {
    if (error instanceof CliError) {
      writeError(verb, error.message, error.hint);
      return error.exitCode;
    }
    if (error instanceof UsageError) {
      writeError(verb, error.message, error.hint ?? helpHint(verb));
      return EXIT.usage;
    }
    throw error;
  }
}
