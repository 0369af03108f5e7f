package cmd

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/kubeevents/kubeevents/internal/config"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/plan"
	"github.com/kubeevents/kubeevents/internal/render"
	"github.com/kubeevents/kubeevents/internal/resource"
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

// completionTimeout bounds every completion that talks to the cluster: on an unreachable
// or slow server the shell gets no candidates after this long, rather than hanging.
const completionTimeout = 2 * time.Second

// noFiles is the directive of every dynamic completion: candidates or nothing, never
// the shell's file names.
const noFiles = cobra.ShellCompDirectiveNoFileComp

// clusterCompletion runs fn with a deadline and a short request timeout on the REST
// config. It returns nothing if fn takes longer, fails or panics: a completion never
// prints errors into the shell.
func clusterCompletion(cmd *cobra.Command, configFlags *genericclioptions.ConfigFlags, fn func(ctx context.Context) []cobra.Completion) []cobra.Completion {
	limitRequestTimeout(configFlags)
	firstContext(configFlags)
	parent := cmd.Context()
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithTimeout(parent, completionTimeout)
	defer cancel()
	done := make(chan []cobra.Completion, 1)
	go func() {
		defer func() {
			if recover() != nil {
				done <- nil
			}
		}()
		done <- fn(ctx)
	}()
	select {
	case comps := <-done:
		return comps
	case <-ctx.Done():
		// Stop fn (its requests take ctx) and give it a moment to return: nothing a
		// completion started should outlive it (client-go still logs the cancelled
		// request, which raced with the next command's klog set-up in tests).
		cancel()
		select {
		case <-done:
		case <-time.After(completionGrace):
		}
		return nil
	}
}

// completionGrace is how long a completion past its deadline waits for its requests to
// end once cancelled.
const completionGrace = 500 * time.Millisecond

// firstContext makes a --context of several contexts (a list, a glob) the first one it
// picks, for completions that ask a cluster: types and names are completed from it.
func firstContext(configFlags *genericclioptions.ConfigFlags) {
	if configFlags.Context != nil {
		*configFlags.Context = plan.FirstContext(configFlags, *configFlags.Context)
	}
}

// limitRequestTimeout caps the timeout of every request made through configFlags at
// completionTimeout (a shorter --request-timeout stays).
func limitRequestTimeout(configFlags *genericclioptions.ConfigFlags) {
	wrap := configFlags.WrapConfigFn
	configFlags.WrapConfigFn = func(c *rest.Config) *rest.Config {
		if wrap != nil {
			c = wrap(c)
		}
		if c.Timeout <= 0 || c.Timeout > completionTimeout {
			c.Timeout = completionTimeout
		}
		c.WarningHandler = rest.NoWarnings{}
		return c
	}
}

// registerConfigFlagCompletions completes kubectl's connection flags: namespaces from
// the cluster, contexts, clusters and users from the kubeconfig.
func registerConfigFlagCompletions(root *cobra.Command, configFlags *genericclioptions.ConfigFlags) {
	_ = root.RegisterFlagCompletionFunc("namespace", completeNamespaceList(configFlags, true))
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
		for _, c := range kubeconfigCompletions(configFlags, "context", last) {
			if name, _, _ := strings.Cut(c, "\t"); !given[name] {
				comps = append(comps, done+c)
			}
		}
		return comps, noFiles
	})
	_ = root.RegisterFlagCompletionFunc("cluster", func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return kubeconfigCompletions(configFlags, "cluster", toComplete), noFiles
	})
	_ = root.RegisterFlagCompletionFunc("user", func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return kubeconfigCompletions(configFlags, "user", toComplete), noFiles
	})
}

// kubeconfigCompletions lists the kubeconfig's contexts, clusters or users (what is
// "context", "cluster" or "user"), without asking the server.
func kubeconfigCompletions(configFlags *genericclioptions.ConfigFlags, what, toComplete string) []cobra.Completion {
	raw, err := configFlags.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return nil
	}
	var comps []cobra.Completion
	add := func(name, desc string) {
		if strings.HasPrefix(name, toComplete) {
			comps = append(comps, cobra.CompletionWithDesc(name, desc))
		}
	}
	switch what {
	case "context":
		for name, c := range raw.Contexts {
			desc := "cluster " + c.Cluster + ", user " + c.AuthInfo
			if c.Namespace != "" {
				desc += ", namespace " + c.Namespace
			}
			if name == raw.CurrentContext {
				desc = "(current) " + desc
			}
			add(name, desc)
		}
	case "cluster":
		for name, c := range raw.Clusters {
			add(name, c.Server)
		}
	case "user":
		for name := range raw.AuthInfos {
			add(name, "")
		}
	}
	sort.Strings(comps)
	return comps
}

// completeWatchArgs completes `watch`'s arguments: the first is a comma-separated list
// of resource types, the rest are object names of those types.
func completeWatchArgs(configFlags *genericclioptions.ConfigFlags) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if typ, name, ok := strings.Cut(toComplete, "/"); ok && len(args) == 0 {
			// TYPE/NAME, as kubectl users type it (watch deployment/web --owned).
			return clusterCompletion(cmd, configFlags, func(ctx context.Context) []cobra.Completion {
				return prefixed(typ+"/", completeObjectNames(ctx, cmd, configFlags, []string{typ}, name))
			}), noFiles
		}
		if len(args) == 0 {
			return clusterCompletion(cmd, configFlags, func(context.Context) []cobra.Completion {
				return completeTypes(configFlags, toComplete)
			}), noFiles
		}
		return clusterCompletion(cmd, configFlags, func(ctx context.Context) []cobra.Completion {
			return completeObjectNames(ctx, cmd, configFlags, args, toComplete)
		}), noFiles
	}
}

// prefixed puts prefix before every completion.
func prefixed(prefix string, comps []cobra.Completion) []cobra.Completion {
	for i, c := range comps {
		comps[i] = prefix + c
	}
	return comps
}

// completeTypes completes the last element of a comma-separated list of resource types
// from the (disk-cached) discovery information: every type that can be listed and
// watched, by plural name and by short name. Plural names found in more than one API
// group, and any name once a '.' is typed, are offered as plural.group.
func completeTypes(configFlags *genericclioptions.ConfigFlags, toComplete string) []cobra.Completion {
	prefix, last := "", toComplete
	if i := strings.LastIndex(toComplete, ","); i >= 0 {
		prefix, last = toComplete[:i+1], toComplete[i+1:]
	}
	typed := map[string]bool{}
	for _, t := range strings.Split(prefix, ",") {
		typed[strings.TrimSpace(t)] = true
	}
	disco, err := configFlags.ToDiscoveryClient()
	if err != nil {
		return nil
	}
	comps := typeCandidates(preferredResources(disco), prefix, last, typed)
	if len(comps) == 0 && last != "" {
		// Perhaps a type created since the cache was written: look again, as kubectl's
		// RESTMapper does for a type it does not know.
		disco.Invalidate()
		comps = typeCandidates(preferredResources(disco), prefix, last, typed)
	}
	return comps
}

// preferredResources is discovery's preferred version of every resource; a group whose
// discovery failed is left out, the others are still offered.
func preferredResources(disco discovery.DiscoveryInterface) []*metav1.APIResourceList {
	lists, _ := disco.ServerPreferredResources()
	return lists
}

// typeCandidates makes the completions for the last element of a type list from
// discovery's resource lists.
func typeCandidates(lists []*metav1.APIResourceList, prefix, last string, typed map[string]bool) []cobra.Completion {
	type resource struct {
		gv  schema.GroupVersion
		api metav1.APIResource
	}
	var resources []resource
	groupsOf := map[string]int{} // plural name -> number of groups serving it
	for _, list := range lists {
		if list == nil {
			continue
		}
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") || !slices.Contains(r.Verbs, "watch") {
				continue
			}
			resources = append(resources, resource{gv, r})
			groupsOf[r.Name]++
		}
	}
	qualified := strings.Contains(last, ".")
	seen := map[string]bool{}
	var comps []cobra.Completion
	add := func(name, desc string) {
		if seen[name] || typed[name] || !strings.HasPrefix(name, last) {
			return
		}
		seen[name] = true
		comps = append(comps, cobra.CompletionWithDesc(prefix+name, desc))
	}
	for _, r := range resources {
		full := r.api.Name
		if r.gv.Group != "" {
			full += "." + r.gv.Group
		}
		desc := r.api.Kind + " (" + r.gv.String() + ")"
		switch {
		case qualified || (groupsOf[r.api.Name] > 1 && r.gv.Group != ""):
			add(full, desc)
		default:
			add(r.api.Name, desc)
		}
		for _, short := range r.api.ShortNames {
			add(short, desc+", short for "+full)
		}
	}
	// Categories (all, and those of custom resources) expand to their types.
	if !qualified {
		for _, r := range resources {
			for _, category := range r.api.Categories {
				add(category, "category: the types of `kubectl get "+category+"`")
			}
		}
	}
	sort.Strings(comps)
	return comps
}

// completeObjectNames lists the names of the objects of the types in args[0], in the
// namespace and with the selectors the command line gives, leaving out names already
// given.
func completeObjectNames(ctx context.Context, cmd *cobra.Command, configFlags *genericclioptions.ConfigFlags, args []string, toComplete string) []cobra.Completion {
	mapper, err := configFlags.ToRESTMapper()
	if err != nil {
		return nil
	}
	disco, err := configFlags.ToDiscoveryClient()
	if err != nil {
		return nil
	}
	namespace, _, err := configFlags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil
	}
	opts := metav1.ListOptions{}
	opts.LabelSelector, _ = cmd.Flags().GetString("selector")
	opts.FieldSelector, _ = cmd.Flags().GetString("field-selector")
	given := map[string]bool{}
	for _, name := range args[1:] {
		given[name] = true
	}
	var comps []cobra.Completion
	seen := map[string]bool{}
	for _, t := range strings.Split(args[0], ",") {
		if t = strings.TrimSpace(t); t == "" {
			continue
		}
		res, err := resource.Resolve(t, mapper, disco)
		if err != nil {
			continue
		}
		ns := namespace
		if !res.Namespaced {
			ns = ""
		} else if all, _ := cmd.Flags().GetBool("all-namespaces"); all {
			continue // names of namespaced types cannot be used with -A
		}
		for _, c := range listNames(ctx, configFlags, res.GVR, ns, opts, toComplete, given) {
			if !seen[c] {
				seen[c] = true
				comps = append(comps, c)
			}
		}
	}
	sort.Strings(comps)
	return comps
}

// listNames lists the names of gvr's objects in namespace ("" for all or cluster-scoped)
// that start with toComplete, through the metadata API (no object bodies).
func listNames(ctx context.Context, configFlags *genericclioptions.ConfigFlags, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions, toComplete string, skip map[string]bool) []cobra.Completion {
	restConfig, err := configFlags.ToRESTConfig()
	if err != nil {
		return nil
	}
	client, err := metadata.NewForConfig(restConfig)
	if err != nil {
		return nil
	}
	var list *metav1.PartialObjectMetadataList
	if namespace == "" {
		list, err = client.Resource(gvr).List(ctx, opts)
	} else {
		list, err = client.Resource(gvr).Namespace(namespace).List(ctx, opts)
	}
	if err != nil {
		return nil
	}
	var names []cobra.Completion
	for _, item := range list.Items {
		if strings.HasPrefix(item.Name, toComplete) && !skip[item.Name] {
			names = append(names, item.Name)
		}
	}
	sort.Strings(names)
	return names
}

// Descriptions shown next to flag values; a value without one is offered bare.
var (
	formatDescriptions = map[string]string{
		string(render.FormatPretty): "one aligned line per event, with what changed",
		string(render.FormatWide):   "pretty with kubectl's -o wide columns",
		"custom-columns=":           "kubectl's custom columns, after an EVENT column: HEADER:.path,...",
		"custom-columns-file=":      "custom columns from a file: a line of headers, a line of paths",
		"jsonpath=":                 "kubectl's JSONPath template per event, after the event type",
		"jsonpath-file=":            "a JSONPath template from a file",
		"go-template=":              "a Go template per event, after the event type",
		"go-template-file=":         "a Go template from a file",
		string(render.FormatJSON):   "JSON Lines: one object per event",
		string(render.FormatYAML):   "one YAML document per event",
		string(render.FormatName):   "TYPE kind/name, as kubectl get -o name",
	}
	policyDescriptions = map[string]string{
		listener.Block.String():      "wait for room: lossless, may hold up this sink's informer handler",
		listener.DropOldest.String(): "drop the oldest queued event: the sink stays current",
		listener.DropNewest.String(): "drop the incoming event: keep what is queued",
		listener.Coalesce.String():   "merge events for the same object: every final state arrives",
	}
	colorValues       = []string{"auto", "always", "never"}
	colorDescriptions = map[string]string{
		"auto":   "only when stdout is a terminal and NO_COLOR is unset",
		"always": "always colour",
		"never":  "never colour",
	}
)

// withDescriptions offers the values starting with toComplete (after prefix), each with
// its description.
func withDescriptions(prefix string, values []string, descriptions map[string]string, toComplete string) []cobra.Completion {
	var comps []cobra.Completion
	for _, v := range values {
		if strings.HasPrefix(prefix+v, toComplete) {
			comps = append(comps, cobra.CompletionWithDesc(prefix+v, descriptions[v]))
		}
	}
	return comps
}

func completeFormats(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if render.IsTemplateFormat(toComplete) {
		return nil, noFiles // the template itself: nothing to offer
	}
	formats := append(render.Formats(), render.TemplateFormats()...)
	out := withDescriptions("", formats, formatDescriptions, toComplete)
	for _, c := range out {
		if !strings.Contains(string(c), "=") {
			return out, noFiles
		}
	}
	// Only templates left: the shell must not end the word after their "=".
	return out, noFiles | cobra.ShellCompDirectiveNoSpace
}

func completeOnFull(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return withDescriptions("", listener.Policies(), policyDescriptions, toComplete), noFiles
}

func completeColor(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return withDescriptions("", colorValues, colorDescriptions, toComplete), noFiles
}

// completeSink completes a --sink value, KIND[(OPTIONS)][=TARGET], step by step: the
// kind, then the option keys of that kind and the values of format, on-full, raw and
// compress, then a terminal's format.
func completeSink(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	partial := cobra.ShellCompDirectiveNoSpace | noFiles
	i := strings.IndexAny(toComplete, "(=")
	if i < 0 {
		var comps []cobra.Completion
		for _, name := range config.Kinds() {
			kind, _ := config.LookupKind(name)
			desc := kind.Description
			forms := []cobra.Completion{
				cobra.CompletionWithDesc(name+"=", desc+kind.TargetHint),
				cobra.CompletionWithDesc(name+"(", desc+", with options"),
			}
			if kind.OptionalTarget() {
				forms = append([]cobra.Completion{cobra.CompletionWithDesc(name, desc+", in the -o format")}, forms...)
			}
			for _, f := range forms {
				if strings.HasPrefix(f, toComplete) {
					comps = append(comps, f)
				}
			}
		}
		return comps, partial
	}
	kindName := toComplete[:i]
	kind, ok := config.LookupKind(kindName)
	if !ok {
		return nil, noFiles
	}
	if toComplete[i] == '=' {
		switch {
		case kind.TargetIsFormat():
			return withDescriptions(toComplete[:i+1], kind.Formats(), formatDescriptions, toComplete), noFiles
		case kind.TargetIsPath():
			return pathCompletions(toComplete[:i+1], toComplete[i+1:])
		}
		return nil, noFiles // a jq expression
	}
	// Inside or after the option list.
	rest := toComplete[i+1:]
	closeAt, segStart := optionListEnd(rest)
	if closeAt >= 0 {
		if closeAt == len(rest)-1 && kind.AfterOptions != "" {
			return []cobra.Completion{cobra.CompletionWithDesc(toComplete+"=", kind.AfterOptions)}, partial
		}
		if target := i + 1 + closeAt + 1; kind.TargetIsPath() && target < len(toComplete) && toComplete[target] == '=' {
			return pathCompletions(toComplete[:target+1], toComplete[target+1:])
		}
		return nil, noFiles // complete, or a jq expression
	}
	base := toComplete[:i+1+segStart]
	seg := rest[segStart:]
	if eq := strings.IndexByte(seg, '='); eq >= 0 {
		key := seg[:eq]
		base += key + "="
		values, isPath := config.OptionValues(kindName, key)
		if isPath && !strings.Contains(seg[eq+1:], `"`) {
			comps, directive := pathCompletions(base, seg[eq+1:])
			return comps, directive | cobra.ShellCompDirectiveNoSpace // the option list goes on
		}
		// Formats and policies are described; true and false need no words.
		descriptions := map[string]string{}
		maps.Copy(descriptions, formatDescriptions)
		maps.Copy(descriptions, policyDescriptions)
		return withDescriptions(base, values, descriptions, toComplete), partial
	}
	used := map[string]bool{}
	for _, opt := range strings.Split(rest[:segStart], ",") {
		used[strings.TrimSpace(strings.SplitN(opt, "=", 2)[0])] = true
	}
	var comps []cobra.Completion
	for _, key := range config.OptionKeys(kindName) {
		if used[key] {
			continue
		}
		form := key + "="
		if config.BareOption(key) {
			form = key
		}
		if strings.HasPrefix(base+form, toComplete) {
			comps = append(comps, cobra.CompletionWithDesc(base+form, config.OptionHelp(key)))
		}
	}
	return comps, partial
}

// pathCompletions offers the files and directories whose path starts with partial, each
// after prefix ("file=", "jq(output="): the shell cannot complete these paths itself,
// since the word starts with the sink's kind. A directory ends in "/" and keeps the
// cursor after it; dot files only once a "." is typed, as in the shells.
func pathCompletions(prefix, partial string) ([]cobra.Completion, cobra.ShellCompDirective) {
	dir, base := filepath.Split(partial)
	readDir := dir
	if readDir == "" {
		readDir = "."
	}
	entries, err := os.ReadDir(readDir)
	if err != nil {
		return nil, noFiles
	}
	var comps []cobra.Completion
	directive := noFiles
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, base) || (strings.HasPrefix(name, ".") && !strings.HasPrefix(base, ".")) {
			continue
		}
		comp := prefix + dir + name
		if info, err := os.Stat(filepath.Join(readDir, name)); err == nil && info.IsDir() {
			comp += "/"
			directive |= cobra.ShellCompDirectiveNoSpace
		}
		comps = append(comps, comp)
	}
	return comps, directive
}

// optionListEnd scans an option list (what follows '(') the way the --sink parser does:
// closeAt is the index of its closing ')' (-1 if still open), segStart where the option
// being typed starts.
func optionListEnd(s string) (closeAt, segStart int) {
	inQuote := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case inQuote && c == '\\':
			i++
		case c == '"':
			inQuote = !inQuote
		case inQuote:
		case c == ',':
			segStart = i + 1
		case c == ')':
			return i, segStart
		}
	}
	return -1, segStart
}

// registerWatchCompletions registers how `watch`'s arguments and flag values complete.
func registerWatchCompletions(c *cobra.Command, configFlags *genericclioptions.ConfigFlags) {
	c.ValidArgsFunction = completeWatchArgs(configFlags)
	_ = c.RegisterFlagCompletionFunc("output", completeFormats)
	_ = c.RegisterFlagCompletionFunc("color", completeColor)
	_ = c.RegisterFlagCompletionFunc("on-full", completeOnFull)
	_ = c.RegisterFlagCompletionFunc("sink", completeSink)
	_ = c.RegisterFlagCompletionFunc("event-types", completeEventTypes)
	_ = c.RegisterFlagCompletionFunc("exclude-namespace", completeNamespaceList(configFlags, false))
	_ = c.RegisterFlagCompletionFunc("owned-types", func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return clusterCompletion(cmd, configFlags, func(context.Context) []cobra.Completion {
			return completeTypes(configFlags, toComplete)
		}), noFiles
	})
	for _, name := range []string{"selector", "field-selector", "jq", "buffer", "resync", "grace", "ignore-path", "max-events", "timeout", "until", "metrics-addr"} {
		_ = c.RegisterFlagCompletionFunc(name, cobra.NoFileCompletions)
	}
}

// completeNamespaceList completes namespaces from the cluster; with list, -n's comma
// list: the last element, after those given.
func completeNamespaceList(configFlags *genericclioptions.ConfigFlags, list bool) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		done, last := "", toComplete
		if i := strings.LastIndex(toComplete, ","); list && i >= 0 {
			done, last = toComplete[:i+1], toComplete[i+1:]
		}
		skip := map[string]bool{}
		for _, ns := range strings.Split(done, ",") {
			if ns = strings.TrimSpace(ns); ns != "" {
				skip[ns] = true
			}
		}
		names := clusterCompletion(cmd, configFlags, func(ctx context.Context) []cobra.Completion {
			return listNames(ctx, configFlags, schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, "", metav1.ListOptions{}, last, skip)
		})
		for i := range names {
			names[i] = done + names[i]
		}
		return names, noFiles
	}
}

// completeEventTypes completes --event-types' comma-separated list: the last element,
// keeping what is before it.
func completeEventTypes(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	done := ""
	if i := strings.LastIndex(toComplete, ","); i >= 0 {
		done = toComplete[:i+1]
	}
	var out []string
	for _, t := range []event.EventType{event.Added, event.Modified, event.Deleted} {
		if strings.HasPrefix(done+string(t), strings.ToUpper(toComplete)) && !strings.Contains(strings.ToUpper(done), string(t)+",") {
			out = append(out, done+string(t))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}
