// The command-line reference page, from the `sitefile` binary's own `--help` texts: every
// command and subcommand, as clap prints them.
"use strict";

const { execFileSync } = require("node:child_process");

/** The help text of `sitefile <words…> --help`. */
function helpOf(binary, words) {
  return execFileSync(binary, [...words, "--help"], { encoding: "utf8" }).trimEnd();
}

/** The subcommands a help text lists under `Commands:` (without clap's `help`). */
function subcommands(help) {
  const section = help.match(/^Commands:\n((?: {2}.*\n?)+)/m);
  if (!section) return [];
  return section[1]
    .split("\n")
    .map((line) => line.match(/^ {2}(\S+)/)?.[1])
    .filter((name) => name && name !== "help");
}

/** Every command path below `words`, depth first, with its help text. */
function commands(binary, words = []) {
  const help = helpOf(binary, words);
  const found = [{ words, help }];
  for (const name of subcommands(help)) found.push(...commands(binary, [...words, name]));
  return found;
}

/** The command-line reference page for the binary at `binary`. */
function cliPage(binary) {
  const out = [
    "# Command line",
    "",
    "Every command of the `sitefile` binary, with the help it prints (`sitefile <command>",
    "--help`). This page is generated from those texts.",
    "",
  ];
  for (const { words, help } of commands(binary)) {
    out.push(`## \`sitefile${words.map((w) => ` ${w}`).join("")}\``, "", "```text", help, "```", "");
  }
  return `${out.join("\n").trimEnd()}\n`;
}

module.exports = { cliPage };

if (require.main === module) {
  process.stdout.write(cliPage(process.argv[2]));
}
