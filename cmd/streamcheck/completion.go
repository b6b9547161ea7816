package main

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"text/template"

	"github.com/streamcheck/streamcheck/report"
)

const completionUsage = `
usage: streamcheck completion bash|zsh|fish

Completion prints a script that completes streamcheck's commands, their
flags, the values of --format and file names in that shell. Load it with:

  bash:  source <(streamcheck completion bash)     (or save it in
         ~/.local/share/bash-completion/completions/streamcheck)
  zsh:   streamcheck completion zsh > "${fpath[1]}/_streamcheck"
  fish:  streamcheck completion fish > ~/.config/fish/completions/streamcheck.fish
`

// completionFlag is one flag of a command, as its usage lists it.
type completionFlag struct {
	Name  string
	Value bool // takes a value (-o FILE), rather than being a switch
	Usage string
}

// completionCommand is a command with its flags, for the scripts.
type completionCommand struct {
	Name, Synopsis string
	Flags          []completionFlag
}

// completionData is what the script templates are written from.
type completionData struct {
	Commands []completionCommand
	Formats  []string
	Shells   []string
}

// cmdCompletion prints the completion script for a shell.
func (c *cli) cmdCompletion(args []string) int {
	pos, code, done := c.parseFlags(newFlags("completion"), completionUsage, args, false)
	if done {
		return code
	}
	if len(pos) != 1 {
		return c.usageErrorf("completion takes one shell: %s", strings.Join(completionShells(), ", "))
	}
	tmpl, ok := completionScripts[pos[0]]
	if !ok {
		return c.usageErrorf("completion: unknown shell %q (want %s)", pos[0], strings.Join(completionShells(), ", "))
	}
	d := completionInfo()
	funcs := template.FuncMap{"quote": shellQuote, "dash": dash, "zshSpec": func(f completionFlag) string { return zshSpec(f, d.Formats) }}
	t := template.Must(template.New(pos[0]).Funcs(funcs).Parse(tmpl))
	if err := t.Execute(c.stdout, d); err != nil {
		return c.usageErrorf("completion: %v", err)
	}
	return exitOK
}

func completionShells() []string {
	shells := make([]string, 0, len(completionScripts))
	for s := range completionScripts {
		shells = append(shells, s)
	}
	slices.Sort(shells)
	return shells
}

// completionInfo lists the commands (help included) and the flags each
// one's usage shows, read from that usage so the scripts never miss a flag.
func completionInfo() completionData {
	d := completionData{Formats: report.Names(), Shells: completionShells()}
	d.Commands = append(d.Commands, completionCommand{Name: "help", Synopsis: "print a command's usage and flags"})
	for _, cmd := range tableOfCommands() {
		var usage strings.Builder
		cmd.run(&cli{stdin: strings.NewReader(""), stdout: &usage, stderr: io.Discard}, []string{"-h"})
		d.Commands = append(d.Commands, completionCommand{Name: cmd.name, Synopsis: cmd.synopsis, Flags: usageFlags(usage.String())})
	}
	return d
}

// tableOfCommands returns commands; it is set in init because the table
// names cmdCompletion, which reads it (an initialization cycle otherwise).
var tableOfCommands func() []command

func init() { tableOfCommands = func() []command { return commands } }

// flagLine matches a flag in flag.PrintDefaults' output: "  -name" and,
// for a flag that takes a value, its value's name.
var flagLine = regexp.MustCompile(`^  -([A-Za-z0-9][-A-Za-z0-9_]*)( \S+)?$`)

// usageFlags returns the flags listed in a command's usage, with the first
// line of each one's description.
func usageFlags(usage string) []completionFlag {
	var flags []completionFlag
	sc := bufio.NewScanner(strings.NewReader(usage))
	inFlags := false
	for sc.Scan() {
		line := sc.Text()
		if line == "Flags:" {
			inFlags = true
			continue
		}
		if !inFlags {
			continue
		}
		if m := flagLine.FindStringSubmatch(line); m != nil {
			flags = append(flags, completionFlag{Name: m[1], Value: m[2] != ""})
		} else if n := len(flags); n > 0 && flags[n-1].Usage == "" {
			flags[n-1].Usage = strings.TrimSpace(line)
		}
	}
	return flags
}

// zshSpec is a flag's _arguments spec: --name[what it does], then for a
// flag that takes a value, --format's values or file names.
func zshSpec(f completionFlag, formats []string) string {
	usage := strings.NewReplacer("[", "(", "]", ")", ":", " ").Replace(f.Usage)
	spec := fmt.Sprintf("%s[%s]", dash(f.Name), usage)
	switch {
	case f.Name == "format":
		spec += fmt.Sprintf(":format:(%s)", strings.Join(formats, " "))
	case f.Value:
		spec += ":value:_files"
	}
	return shellQuote(spec)
}

// dash writes a flag as its usage does: -o, --format.
func dash(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// shellQuote quotes s for bash, zsh and fish alike: single quotes, with
// each single quote closed, escaped and reopened.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

var completionScripts = map[string]string{
	"bash": `# bash completion for streamcheck (streamcheck completion bash)
_streamcheck() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=
	(( COMP_CWORD > 1 )) && prev=${COMP_WORDS[COMP_CWORD-1]}
	if (( COMP_CWORD == 1 )); then
		COMPREPLY=($(compgen -W '{{range .Commands}}{{.Name}} {{end}}' -- "$cur"))
		return
	fi
	local cmd=${COMP_WORDS[1]} flags= i
	for (( i = 2; i < COMP_CWORD; i++ )); do
		[[ ${COMP_WORDS[i]} == -- ]] && { COMPREPLY=($(compgen -c -- "$cur")); compopt -o default 2>/dev/null; return; }
	done
	case $cmd in
	help) COMPREPLY=($(compgen -W '{{range .Commands}}{{.Name}} {{end}}' -- "$cur")); return ;;
	completion) COMPREPLY=($(compgen -W '{{range .Shells}}{{.}} {{end}}' -- "$cur")); return ;;
	esac
	case $prev in
	-format|--format) COMPREPLY=($(compgen -W '{{range .Formats}}{{.}} {{end}}' -- "$cur")); return ;;
	esac
	case $cmd in
{{- range .Commands}}
	{{.Name}}) flags='{{range .Flags}}{{dash .Name}} {{end}}' ;;
{{- end}}
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$flags" -- "$cur"))
	else
		COMPREPLY=($(compgen -f -- "$cur"))
		compopt -o filenames 2>/dev/null
	fi
}
complete -F _streamcheck streamcheck
`,
	"zsh": `#compdef streamcheck
# zsh completion for streamcheck (streamcheck completion zsh)
_streamcheck() {
	local -a cmds
	cmds=(
{{- range .Commands}}
		{{quote (printf "%s:%s" .Name .Synopsis)}}
{{- end}}
	)
	if (( CURRENT == 2 )); then
		_describe command cmds
		return
	fi
	case $words[2] in
	help) _describe command cmds ;;
	completion) compadd{{range .Shells}} {{.}}{{end}} ;;
{{- range .Commands}}{{if .Flags}}
	{{.Name}}) _arguments -S{{range .Flags}} {{zshSpec .}}{{end}} '*:file:_files' ;;
{{- end}}{{end}}
	*) _files ;;
	esac
}
if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
	_streamcheck "$@"
else
	compdef _streamcheck streamcheck
fi
`,
	"fish": `# fish completion for streamcheck (streamcheck completion fish)
complete -c streamcheck -f
{{- range .Commands}}
complete -c streamcheck -n __fish_use_subcommand -a {{.Name}} -d {{quote .Synopsis}}
{{- end}}
complete -c streamcheck -n '__fish_seen_subcommand_from help' -a '{{range .Commands}}{{.Name}} {{end}}'
complete -c streamcheck -n '__fish_seen_subcommand_from completion' -a '{{range .Shells}}{{.}} {{end}}'
{{- range $c := .Commands}}{{range .Flags}}
complete -c streamcheck -n '__fish_seen_subcommand_from {{$c.Name}}' {{if eq (len .Name) 1}}-s{{else}}-l{{end}} {{.Name}}{{if .Value}} -r{{if eq .Name "format"}} -a '{{range $.Formats}}{{.}} {{end}}'{{else}} -F{{end}}{{end}} -d {{quote .Usage}}
{{- end}}{{end}}
complete -c streamcheck -n 'not __fish_use_subcommand; and not __fish_seen_subcommand_from help completion' -F
`,
}
