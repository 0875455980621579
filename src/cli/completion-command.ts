/**
 * `completion bash|zsh|fish`: a shell completion script written from the
 * program's own commands and flags (so it never drifts from them), as kubectl
 * and flux print theirs: `source <(generate-gitops-env completion bash)`.
 * After `--cluster` each shell offers the clusters of the repository (the
 * directories under `clusters/` of the `--repo` on the line, else of the Git
 * work tree the shell is in), not file names: what `clusters` lists.
 */
import { Argument, type Command, type Option } from 'commander';

/** The shells a script is written for. */
export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

interface FlagSpec {
  readonly long: string;
  readonly short?: string;
  readonly description: string;
  /** Whether the flag takes a value. */
  readonly takesValue: boolean;
  readonly choices: readonly string[];
}

interface CommandSpec {
  readonly name: string;
  readonly description: string;
  readonly flags: readonly FlagSpec[];
}

function flagsOf(command: Command): FlagSpec[] {
  const options = [...(command.options as readonly Option[])];
  return options
    .filter((o) => !o.hidden && o.long !== undefined)
    .map((o) => ({
      long: o.long as string,
      ...(o.short !== undefined ? { short: o.short } : {}),
      description: o.description,
      takesValue: o.required || o.optional,
      choices: o.argChoices ?? [],
    }));
}

function specOf(program: Command): { name: string; root: FlagSpec[]; commands: CommandSpec[] } {
  const commands = program.commands
    .filter((c) => c.name() !== 'help')
    .map((c) => ({
      name: c.name(),
      description: c.description(),
      flags: [...flagsOf(c), { long: '--help', short: '-h', description: 'display help for command', takesValue: false, choices: [] }],
    }));
  return { name: program.name(), root: flagsOf(program), commands };
}

/** One line, without characters that would end a quoted word in any of the shells. */
const plain = (text: string) =>
  text
    .replace(/\s+/g, ' ')
    .replace(/['"`$\\[\]:]/g, '')
    .trim();
const identifier = (name: string) => `_${name.replace(/[^a-zA-Z0-9]/g, '_')}`;

/** The flag whose value is a cluster of the repository: completed with the names under clusters/. */
const CLUSTER_FLAG = '--cluster';
/** The flag naming the repository's work tree, read from the line being completed. */
const REPO_FLAG = '--repo';
const namesCluster = (f: FlagSpec) => f.long === CLUSTER_FLAG && f.takesValue && f.choices.length === 0;

function bash(spec: ReturnType<typeof specOf>): string {
  const fn = identifier(spec.name);
  const cases = spec.commands.map((c) => {
    const valued = c.flags.filter((f) => f.takesValue);
    const choices = valued
      .filter((f) => f.choices.length > 0)
      .map((f) => `        ${f.long}${f.short ? `|${f.short}` : ''}) COMPREPLY=( $(compgen -W "${f.choices.join(' ')}" -- "$cur") ); return ;;`);
    const clusters = valued
      .filter(namesCluster)
      .map((f) => `        ${f.long}${f.short ? `|${f.short}` : ''}) COMPREPLY=( $(compgen -W "$(${fn}_clusters)" -- "$cur") ); return ;;`);
    // A flag that takes another free value (a file, a directory): complete file names.
    const free = valued.filter((f) => f.choices.length === 0 && !namesCluster(f)).flatMap((f) => [f.long, ...(f.short ? [f.short] : [])]);
    return [
      `    ${c.name})`,
      `      case "$prev" in`,
      ...choices,
      ...clusters,
      ...(free.length > 0 ? [`        ${free.join('|')}) COMPREPLY=( $(compgen -f -- "$cur") ); return ;;`] : []),
      `      esac`,
      `      opts="${c.flags.flatMap((f) => [f.long, ...(f.short ? [f.short] : [])]).join(' ')}" ;;`,
    ].join('\n');
  });
  return `# bash completion for ${spec.name}: source <(${spec.name} completion bash)
# The clusters of the repository: ${REPO_FLAG} on the line, else the Git work tree here.
${fn}_clusters() {
  local repo="" i
  for (( i = 1; i < \${#COMP_WORDS[@]} - 1; i++ )); do
    if [ "\${COMP_WORDS[i]}" = "${REPO_FLAG}" ]; then repo="\${COMP_WORDS[i+1]}"; fi
  done
  repo="\${repo/#\\~/$HOME}"
  [ -n "$repo" ] || repo="$(git rev-parse --show-toplevel 2>/dev/null)" || repo=.
  [ -n "$repo" ] || repo=.
  local dir
  for dir in "$repo"/clusters/*/; do
    [ -d "$dir" ] && dir="\${dir%/}" && printf '%s\\n' "\${dir##*/}"
  done
}
${fn}() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}" opts=""
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=( $(compgen -W "${spec.commands.map((c) => c.name).join(' ')} ${spec.root.map((f) => f.long).join(' ')}" -- "$cur") )
    return
  fi
  case "\${COMP_WORDS[1]}" in
${cases.join('\n')}
  esac
  if [[ "$cur" == -* ]]; then COMPREPLY=( $(compgen -W "$opts" -- "$cur") ); else COMPREPLY=( $(compgen -f -- "$cur") ); fi
}
complete -o filenames -F ${fn} ${spec.name}
`;
}

function zsh(spec: ReturnType<typeof specOf>): string {
  const fn = identifier(spec.name);
  const zshFlag = (f: FlagSpec) => {
    const names = f.short ? `{${f.short},${f.long}}` : f.long;
    const value = !f.takesValue ? '' : f.choices.length > 0 ? `:value:(${f.choices.join(' ')})` : namesCluster(f) ? `:cluster:${fn}_clusters` : ':value:_files';
    return `'${f.short ? '(' + f.short + ' ' + f.long + ')' : ''}'${names}'[${plain(f.description)}]${value}'`;
  };
  const cases = spec.commands.map((c) => `    ${c.name}) _arguments -s ${c.flags.map(zshFlag).join(' ')} '*:file:_files' ;;`);
  return `#compdef ${spec.name}
# zsh completion for ${spec.name}: source <(${spec.name} completion zsh)
# The clusters of the repository: ${REPO_FLAG} on the line, else the Git work tree here.
${fn}_clusters() {
  local repo="" i
  for (( i = 2; i < CURRENT - 1; i++ )); do
    [[ $words[i] == ${REPO_FLAG} ]] && repo=$words[i+1]
  done
  repo=\${repo/#\\~/$HOME}
  [[ -n $repo ]] || repo=$(git rev-parse --show-toplevel 2>/dev/null) || repo=.
  [[ -n $repo ]] || repo=.
  local -a names
  names=($repo/clusters/*(N/:t))
  compadd -a names
}
${fn}() {
  local -a commands
  commands=(${spec.commands.map((c) => `'${c.name}:${plain(c.description)}'`).join(' ')})
  if (( CURRENT == 2 )); then
    _describe 'command' commands
    return
  fi
  case $words[2] in
${cases.join('\n')}
  esac
}
compdef ${fn} ${spec.name}
`;
}

function fish(spec: ReturnType<typeof specOf>): string {
  const c0 = `complete -c ${spec.name}`;
  const clusters = `__${identifier(spec.name).slice(1)}_clusters`;
  const lines = [
    `# fish completion for ${spec.name}: ${spec.name} completion fish | source`,
    `# The clusters of the repository: ${REPO_FLAG} on the line, else the Git work tree here.`,
    `function ${clusters}`,
    `    set -l words (commandline -opc)`,
    `    set -l repo`,
    `    set -l i (contains -i -- ${REPO_FLAG} $words); and set repo $words[(math $i + 1)]`,
    `    test -n "$repo"; or set repo (git rev-parse --show-toplevel 2>/dev/null); or set repo .`,
    `    for dir in $repo/clusters/*/`,
    `        basename $dir`,
    `    end`,
    `end`,
    `${c0} -f`,
  ];
  for (const c of spec.commands) lines.push(`${c0} -n __fish_use_subcommand -a ${c.name} -d '${plain(c.description)}'`);
  for (const c of spec.commands) {
    for (const f of c.flags) {
      const value = !f.takesValue ? '' : f.choices.length > 0 ? ` -x -a '${f.choices.join(' ')}'` : namesCluster(f) ? ` -x -a '(${clusters})'` : ' -r -F';
      lines.push(
        `${c0} -n '__fish_seen_subcommand_from ${c.name}' -l ${f.long.slice(2)}${f.short ? ` -s ${f.short.slice(1)}` : ''}${value} -d '${plain(f.description)}'`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}

/** The completion script of `program` for `shell`. */
export function completionScript(program: Command, shell: Shell): string {
  const spec = specOf(program);
  return shell === 'bash' ? bash(spec) : shell === 'zsh' ? zsh(spec) : fish(spec);
}

/** Adds `completion SHELL` to `program`; the script covers every command registered by the time it runs. */
export function registerCompletionCommand(program: Command): void {
  program
    .command('completion')
    .description('Print a shell completion script: bash, zsh or fish (e.g. source <(… completion bash)).')
    .addArgument(new Argument('<shell>', 'the shell').choices(SHELLS))
    .action((shell: Shell) => {
      process.stdout.write(completionScript(program, shell));
    });
}
