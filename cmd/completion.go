package cmd

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/kubeevents/kubeevents/internal/complete"
	"github.com/kubeevents/kubeevents/internal/leader"
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// shells are the shells `kubeevents completion` writes scripts for, with the file each
// script has in completions/ (see `make completions`).
var shells = []struct{ Name, File string }{
	{"bash", "kubeevents.bash"},
	{"zsh", "_kubeevents"},
	{"fish", "kubeevents.fish"},
	{"powershell", "kubeevents.ps1"},
}

const completionLong = `Prints the shell completion script for bash, zsh, fish or PowerShell. The scripts
complete commands and flags, and ask kubeevents itself for resource types (short names and
custom resources too), object names, namespaces, contexts, output formats and sinks.
Completion that needs the cluster gives up quietly after 2 seconds.

Packages install the scripts (see completions/ in the release archives); by hand:

  bash:        kubeevents completion bash > ~/.local/share/bash-completion/completions/kubeevents
               (needs the bash-completion package; or: source <(kubeevents completion bash) in ~/.bashrc)
  zsh:         kubeevents completion zsh > "${fpath[1]}/_kubeevents"
               (compinit must be enabled: autoload -U compinit; compinit)
  fish:        kubeevents completion fish > ~/.config/fish/completions/kubeevents.fish
  PowerShell:  kubeevents completion powershell | Out-String | Invoke-Expression
               (add it to $PROFILE to keep it)`

// NewCompletionCommand is `kubeevents completion bash|zsh|fish|powershell`.
func NewCompletionCommand(streams genericiooptions.IOStreams) *cobra.Command {
	noDescriptions := false
	c := &cobra.Command{
		Use:   "completion bash|zsh|fish|powershell",
		Short: "Print the shell completion script for bash, zsh, fish or PowerShell",
		Long:  completionLong,
		ValidArgs: []string{
			"bash\tcompletion script for bash",
			"zsh\tcompletion script for zsh",
			"fish\tcompletion script for fish",
			"powershell\tcompletion script for PowerShell",
		},
		Args:                  cobra.MatchAll(cobra.ExactArgs(1), cobra.OnlyValidArgs),
		DisableFlagsInUseLine: true,
		RunE: func(c *cobra.Command, args []string) error {
			return genCompletion(c.Root(), args[0], streams.Out, !noDescriptions)
		},
	}
	c.Flags().BoolVar(&noDescriptions, "no-descriptions", false, "leave the descriptions out of the completions")
	return c
}

// genCompletion writes root's completion script for shell.
func genCompletion(root *cobra.Command, shell string, w io.Writer, descriptions bool) error {
	switch shell {
	case "bash":
		var script bytes.Buffer
		if err := root.GenBashCompletionV2(&script, descriptions); err != nil {
			return err
		}
		patched, err := patchBashCompletion(script.String(), root.Name())
		if err != nil {
			return err
		}
		_, err = io.WriteString(w, patched)
		return err
	case "zsh":
		if descriptions {
			return root.GenZshCompletion(w)
		}
		return root.GenZshCompletionNoDesc(w)
	case "fish":
		return root.GenFishCompletion(w, descriptions)
	case "powershell":
		if descriptions {
			return root.GenPowerShellCompletionWithDesc(w)
		}
		return root.GenPowerShellCompletion(w)
	}
	return usageErrorf("no completion for shell %q; use bash, zsh, fish or powershell", shell)
}

// patchBashCompletion fixes what cobra's bash script (v1.10) gets wrong for the --sink
// and type-list completions in bash 5 with bash-completion:
//   - with descriptions, it escapes each candidate with printf %q before comparing it
//     with the word typed, so "pods,secrets" (escaped "pods\,secrets") never matches
//     "pods,s", nor "file(format=" matches "file(";
//   - a word with a quote still open (--sink 'file(<TAB>) is passed to eval
//     unterminated, so the program is never asked; and inside a quote, readline
//     replaces only what follows the quote, while cobra strips what comes before a '='.
//
// The patched script completes a quoted word by its unquoted value, asks the program
// with the quote closed, inserts inside the quote (keeping it open after a partial
// candidate such as max-size=), and escapes a single candidate only where bash needs
// it. Each change must apply exactly once: a cobra whose script differs fails here (and
// in the unit tests), not in a user's shell.
func patchBashCompletion(script, name string) (string, error) {
	changes := []struct{ old, new string }{{
		// Ask with the quote closed.
		` ${args[*]}"
`,
		` ${args[*]}${quote}"
`,
	}, {
		// "Nothing typed yet" is about the word as typed, not its unquoted value.
		`if [[ -z ${cur} && ${lastChar} != = ]]; then`,
		`if [[ -z ${lastParam} && ${lastChar} != = ]]; then`,
	}, {
		// Match the candidate as typed, not only escaped.
		`[[ $comp == "$cur"* ]] || continue`,
		`[[ $comp == "$cur"* || ${compline%%$tab*} == "$cur"* ]] || continue`,
	}, {
		`COMPREPLY[0]=$(printf "%q" "${COMPREPLY[0]}")`,
		`COMPREPLY[0]=$(__NAME_quote "${COMPREPLY[0]}")`,
	}, {
		`COMPREPLY[0]=$(printf "%q" "${COMPREPLY[0]%%$tab*}")`,
		`COMPREPLY[0]=$(__NAME_quote "${COMPREPLY[0]%%$tab*}")`,
	}, {
		`    __NAME_debug "Truncated words[*]: ${words[*]},"
`,
		`    __NAME_debug "Truncated words[*]: ${words[*]},"

    # kubeevents: a word with quotes is completed by its unquoted value.
    local quote= uq= qprefix=
    if [[ ${cur} == *[\'\"]* ]]; then
        __NAME_unquote "$cur"
        cur=$uq
    fi
`,
	}, {
		`__NAME_handle_special_char()
{
`,
		`# kubeevents: __NAME_unquote sets uq to the value of the word $1 (quotes and
# backslashes removed), quote to the quote it leaves open (if any) and qprefix to the
# value before that quote: readline replaces only what follows it.
__NAME_unquote() {
    local w=$1 c i
    for ((i = 0; i < ${#w}; i++)); do
        c=${w:i:1}
        if [[ -n $quote ]]; then
            if [[ $c == "$quote" ]]; then
                quote=
                continue
            fi
            if [[ $quote == \" && $c == \\ ]]; then
                ((i++))
                c=${w:i:1}
            fi
        elif [[ $c == [\'\"] ]]; then
            quote=$c
            qprefix=$uq
            continue
        elif [[ $c == \\ ]]; then
            ((i++))
            c=${w:i:1}
        fi
        uq+=$c
    done
    [[ -n $quote ]] || qprefix=
}

# kubeevents: a single candidate goes onto the command line as it is where bash allows
# (printf %q also escapes ',' and '='), escaped otherwise; inside an open quote as it is,
# and with the quote closed and opened again when more is to be typed (max-size=''),
# since readline would close it.
__NAME_quote() {
    if [[ -n ${quote-} ]]; then
        if (((directive & 2) != 0)) && [[ $1 != "$uq" ]]; then
            printf "%s" "$1$quote$quote"
        else
            printf "%s" "$1"
        fi
    elif [[ $1 != *[!A-Za-z0-9._/:=,@%+-]* ]]; then
        printf "%s" "$1"
    else
        printf "%q" "$1"
    fi
}

__NAME_handle_special_char()
{
    # kubeevents: inside a quote, '=' and ':' do not split words; readline replaces what
    # follows the quote.
    if [[ -n ${quote-} ]]; then
        if [[ $2 == : && -n $qprefix ]]; then
            local idx=${#COMPREPLY[*]}
            while ((--idx >= 0)); do
                COMPREPLY[idx]=${COMPREPLY[idx]#"$qprefix"}
            done
        fi
        return
    fi
`,
	}}
	for _, c := range changes {
		old, new := strings.ReplaceAll(c.old, "__NAME_", "__"+name+"_"), strings.ReplaceAll(c.new, "__NAME_", "__"+name+"_")
		if n := strings.Count(script, old); n != 1 {
			return "", fmt.Errorf("cannot patch cobra's bash completion script: %q found %d times, want once", old, n)
		}
		script = strings.Replace(script, old, new, 1)
	}
	return script, nil
}

// The kubectl plugin: krew does not accept names starting with "kube", so the plugin is
// "tail-resources", and kubectl runs it as the executable kubectl-tail_resources (a copy
// of, or a link to, kubeevents).
const (
	pluginExecutable  = "kubectl-tail_resources"
	pluginDisplayName = "kubectl tail-resources"
)

// setPluginDisplayName makes help and usage say `kubectl tail-resources` when kubeevents
// runs as the kubectl plugin (arg0 is os.Args[0]).
func setPluginDisplayName(root *cobra.Command, arg0 string) {
	base := filepath.Base(arg0)
	base = strings.TrimSuffix(strings.TrimSuffix(base, ".exe"), ".EXE")
	if base != pluginExecutable {
		return
	}
	if root.Annotations == nil {
		root.Annotations = map[string]string{}
	}
	root.Annotations[cobra.CommandDisplayNameAnnotation] = pluginDisplayName
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Example = strings.ReplaceAll(c.Example, root.Name()+" ", pluginDisplayName+" ")
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// registerConfigFlagCompletions completes kubectl's connection flags: namespaces from
// the cluster, contexts, clusters and users from the kubeconfig.
func registerConfigFlagCompletions(root *cobra.Command, configFlags *genericclioptions.ConfigFlags) {
	_ = root.RegisterFlagCompletionFunc("namespace", complete.NamespaceList(configFlags, true))
	_ = root.RegisterFlagCompletionFunc("context", func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		// A comma list of contexts (watch several clusters): the last one is completed,
		// and those already given are not offered again.
		done, last := "", toComplete
		if i := strings.LastIndex(toComplete, ","); i >= 0 {
			done, last = toComplete[:i+1], toComplete[i+1:]
		}
		given := map[string]bool{}
		for _, c := range strings.Split(done, ",") {
			given[strings.TrimSpace(c)] = true
		}
		var comps []cobra.Completion
		for _, c := range complete.Kubeconfig(configFlags, "context", last) {
			if name, _, _ := strings.Cut(c, "\t"); !given[name] {
				comps = append(comps, done+c)
			}
		}
		return comps, complete.NoFiles
	})
	_ = root.RegisterFlagCompletionFunc("cluster", func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return complete.Kubeconfig(configFlags, "cluster", toComplete), complete.NoFiles
	})
	_ = root.RegisterFlagCompletionFunc("user", func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return complete.Kubeconfig(configFlags, "user", toComplete), complete.NoFiles
	})
}

// registerWatchCompletions registers how `watch`'s arguments and flag values complete.
func registerWatchCompletions(c *cobra.Command, configFlags *genericclioptions.ConfigFlags) {
	c.ValidArgsFunction = complete.WatchArgs(configFlags)
	_ = c.RegisterFlagCompletionFunc("output", complete.Formats)
	_ = c.RegisterFlagCompletionFunc("color", complete.Color)
	_ = c.RegisterFlagCompletionFunc("on-full", complete.OnFull)
	_ = c.RegisterFlagCompletionFunc("sink", complete.Sink)
	_ = c.RegisterFlagCompletionFunc("event-types", complete.EventTypes)
	_ = c.RegisterFlagCompletionFunc("on", complete.Transitions)
	_ = c.RegisterFlagCompletionFunc("exclude-namespace", complete.NamespaceList(configFlags, false))
	_ = c.RegisterFlagCompletionFunc("owned-types", func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return complete.Cluster(cmd, configFlags, func(context.Context) []cobra.Completion {
			return complete.Types(configFlags, toComplete)
		}), complete.NoFiles
	})
	for _, name := range append([]string{"selector", "field-selector", "jq", "buffer", "resync", "grace", "ignore-path", "max-events", "timeout", "until", "metrics-addr", "since", "ui-history"}, leader.FlagNames[1:]...) {
		_ = c.RegisterFlagCompletionFunc(name, cobra.NoFileCompletions)
	}
}

// registerReplayCompletions registers the value completions of replay and history: the
// arguments are files (the shell's own completion); the flags shared with watch complete
// as watch's.
func registerReplayCompletions(c *cobra.Command) {
	for name, f := range map[string]cobra.CompletionFunc{"output": complete.Formats, "color": complete.Color,
		"on-full": complete.OnFull, "sink": complete.Sink, "event-types": complete.EventTypes} {
		_ = c.RegisterFlagCompletionFunc(name, f)
	}
	for _, name := range []string{"selector", "jq", "buffer", "grace", "ignore-path", "max-events", "timeout", "until",
		"since", "since-time", "until-time", "by", "not-by", "at"} {
		if c.Flags().Lookup(name) != nil {
			_ = c.RegisterFlagCompletionFunc(name, cobra.NoFileCompletions)
		}
	}
}
