package plan

import (
	"fmt"
	"strings"

	"github.com/kubeevents/kubeevents/internal/diag"
)

// Features are what a run asks for that may conflict with each other. Every check of
// one feature against another is in Check, and nowhere else: the command checks what
// its flags and the config file say before anything connects, and Resolve checks again
// once the clusters have said what only they know (how many contexts a glob names,
// whether Secrets are among the types). A count of 0 is "not known yet": the checks that
// need it wait for Resolve.
type Features struct {
	// Replay is `kubeevents replay` or `history`: a recording, not a watch.
	Replay bool
	Types  int // type arguments
	Names  int // NAME arguments
	// Namespaces are -n's namespaces; AllNamespaces is -A, ExcludeNamespaces
	// --exclude-namespace.
	Namespaces        []string
	AllNamespaces     bool
	ExcludeNamespaces bool
	// Contexts is how many contexts are watched (0: not known before Resolve: a glob or
	// --all-contexts); ClusterFlags the one-cluster flags given (--server, --cluster).
	Contexts     int
	ClusterFlags []string
	Selectors    bool // -l or --field-selector
	// Secrets says Secrets are among the watched types, the followed children's too
	// (known after Resolve); ShowSecrets is --show-secrets.
	Secrets, ShowSecrets bool

	Owned, OwnedTypes                 bool
	Until, UntilDeleted, UntilRollout bool
	// UntilReady is --until-ready; Health --health, StalledAfter --stalled-after (what
	// reads the objects' status, as --until-rollout does).
	UntilReady, Health, StalledAfter bool
	// Resume is --resume as given ("" without); ResumeReset --resume-reset.
	Resume      string
	ResumeReset bool
	LeaderElect bool

	WatchOnly, MetadataOnly bool
	WithEvents, Since       bool
	// Resync is --resync; SyncLeftOut says --event-types leaves out SYNC.
	Resync, SyncLeftOut bool
	NoBy, By            bool
	On, FoldRollouts    bool
	EventTypes          bool // --event-types

	// UI is --ui, UIHistory --ui-history given. Screen is the format of the terminal
	// sink that writes to stdout ("" when none does: --no-screen), OtherStdout the name
	// of another sink that writes there too, StdoutTerminal whether stdout is a terminal.
	UI, UIHistory  bool
	Screen         string
	OtherStdout    string
	StdoutTerminal bool
}

// several reports whether more than one context is watched, as far as is known.
func (f Features) several() bool { return f.Contexts > 1 }

// Check refuses a combination of features that cannot work, or a flag that would change
// nothing, with one line saying what to do (a *diag.UsageError); nil when every pair
// goes together.
func Check(f Features) error {
	for _, check := range []func(Features) string{checkReplay, checkWhere, checkOwned, checkConditions, checkResume, checkView, checkEvents} {
		if msg := check(f); msg != "" {
			return diag.Usagef("%s", msg)
		}
	}
	return nil
}

// checkReplay: a recording has no live watch to resume, elect, view or list.
func checkReplay(f Features) string {
	if !f.Replay {
		return ""
	}
	for _, c := range []struct {
		on   bool
		flag string
	}{{f.Resume != "", "--resume"}, {f.LeaderElect, "--leader-elect"}, {f.UI, "--ui"}, {f.WatchOnly, "--watch-only"},
		{f.MetadataOnly, "--metadata-only"}, {f.UntilDeleted, "--until-deleted"}, {f.UntilRollout, "--until-rollout"}, {f.UntilReady, "--until-ready"}} {
		if c.on {
			return c.flag + " applies to a watch of a cluster, and a replay reads a recording: drop " + c.flag
		}
	}
	return ""
}

// checkWhere: namespaces and contexts.
func checkWhere(f Features) string {
	switch {
	case f.ExcludeNamespaces && !f.AllNamespaces:
		return "--exclude-namespace leaves namespaces out of -A/--all-namespaces; add -A (or list the namespaces to watch: -n a,b,c)"
	case f.several() && len(f.ClusterFlags) > 0:
		return "--" + f.ClusterFlags[0] + " applies to one cluster, but several contexts are watched; drop it, or give one --context"
	case f.several() && f.LeaderElect:
		return "--leader-elect takes one cluster, the one whose Lease it holds; drop --context's list or --all-contexts"
	case f.Secrets && strings.HasPrefix(f.Resume, "configmap:"):
		what := "the key behind the fingerprints of their redacted values"
		if f.ShowSecrets {
			what = "their values (--show-secrets)"
		}
		return "--resume " + f.Resume + ": a checkpoint of Secrets holds " + what +
			", and ConfigMaps may be read by anyone who may view the namespace; keep it in Secrets: --resume secret:" + strings.TrimPrefix(f.Resume, "configmap:")
	}
	return ""
}

// checkOwned: --owned follows one object, in one namespace of one cluster.
func checkOwned(f Features) string {
	if !f.Owned {
		switch {
		case f.OwnedTypes:
			return "--owned-types applies to --owned only; add --owned"
		case f.UntilRollout:
			return "--until-rollout follows a rollout through what the object owns; add --owned (kubeevents watch deployment/web --owned --until-rollout), or wait for the objects' health with --until-ready"
		}
		return ""
	}
	switch {
	case f.Types != 1 || f.Names != 1:
		return "--owned follows one object: give it as TYPE/NAME, e.g. kubeevents watch deployment/web --owned"
	case f.AllNamespaces:
		return "--owned follows one object in one namespace: drop -A/--all-namespaces (use -n NAMESPACE)"
	case len(f.Namespaces) > 1:
		return fmt.Sprintf("--owned follows one object in one namespace, but -n names %d (%s); give one namespace", len(f.Namespaces), strings.Join(f.Namespaces, ","))
	case f.several():
		return "--owned follows one object in one cluster, but several contexts are watched; give one --context"
	case f.Selectors && !f.Replay:
		return "--owned selects the objects by their owner (and the server filters them by the owner's selector): drop -l/--selector and --field-selector"
	case f.Resume != "":
		return "--resume and --owned do not go together: a checkpoint keeps the objects of the types given, not of an owner's tree; drop one"
	}
	return ""
}

// checkConditions: what the run waits for.
func checkConditions(f Features) string {
	switch {
	case f.UntilDeleted && f.Names == 0:
		return "--until-deleted needs the names of the objects to wait for: kubeevents watch TYPE NAME... --until-deleted"
	case f.UntilDeleted && f.several():
		return "--until-deleted waits for objects of one cluster, but several contexts are watched; give one --context"
	case f.UntilRollout && (f.Until || f.UntilDeleted):
		return "--until-rollout cannot be combined with --until or --until-deleted: give one condition"
	case f.UntilRollout && f.MetadataOnly:
		return "--until-rollout reads the object's status, which --metadata-only leaves out: drop one of them"
	}
	return checkReady(f)
}

// checkReady: --until-ready waits for the objects' health (docs/health.md), which reads
// their status.
func checkReady(f Features) string {
	switch {
	case (f.Health || f.StalledAfter || f.UntilReady) && f.MetadataOnly:
		flag := "--health"
		if f.UntilReady {
			flag = "--until-ready"
		} else if f.StalledAfter {
			flag = "--stalled-after"
		}
		return flag + " reads the objects' status, which --metadata-only leaves out: drop one of them"
	case !f.UntilReady:
		return ""
	case f.Names == 0:
		return "--until-ready needs the objects to wait for: kubeevents watch TYPE NAME... --until-ready, or TYPE/NAME (with --owned, and what it owns)"
	case f.Until || f.UntilDeleted || f.UntilRollout:
		return "--until-ready cannot be combined with --until, --until-deleted or --until-rollout: give one condition"
	case f.On || f.EventTypes || f.By:
		return "--until-ready follows every change of the objects it waits for, which --on, --event-types, --by and --not-by would leave out; drop them (a sink's on= and event-types= filter that sink alone)"
	case f.WatchOnly || f.Resume != "":
		return "--until-ready needs the objects as they are at start-up, which --watch-only and --resume leave out; drop them"
	}
	return ""
}

// checkResume: a checkpoint keeps what every sink was given of the types watched.
func checkResume(f Features) string {
	switch {
	case f.ResumeReset && f.Resume == "":
		return "--resume-reset applies to --resume only; add --resume FILE"
	case f.Resume != "" && f.WatchOnly:
		return "--resume and --watch-only do not go together: a resumed start emits what changed while kubeevents was down, which --watch-only leaves out; drop one"
	}
	return ""
}

// checkView: the full-screen view takes the terminal.
func checkView(f Features) string {
	if !f.UI {
		if f.UIHistory {
			return "--ui-history applies to --ui only; add --ui"
		}
		return ""
	}
	switch {
	case f.LeaderElect:
		return "--ui is a view for a person at a terminal, --leader-elect is for replicas in a cluster; drop one"
	case f.FoldRollouts:
		return "--ui shows each object as it is now, which folding its events would leave stale; drop --fold-rollouts (a sink's fold folds that sink alone)"
	case f.OtherStdout != "":
		return "--ui takes the standard output, which sink \"" + f.OtherStdout + "\" writes to as well; send that sink to a file, or drop --ui"
	case f.Screen == "":
		return UINoScreen
	case f.Screen != "pretty" && f.Screen != "wide":
		return "--ui shows kubectl's columns, as -o pretty or -o wide do, not -o " + f.Screen + "; drop -o " + f.Screen + " or --ui"
	case !f.StdoutTerminal:
		return "--ui needs a terminal, and the standard output is not one; drop --ui to stream lines (-o json for scripts)"
	}
	return ""
}

// UINoScreen refuses --ui with --no-screen. Whichever sinks there are, dropping
// --no-screen gives a view (the sinks write beside it); dropping --ui would not do
// without a sink.
const UINoScreen = "--ui shows the standard output stream, which --no-screen turns off; drop --no-screen (the sinks go on writing beside the view)"

// checkEvents: which changes become events.
func checkEvents(f Features) string {
	switch {
	case f.Since && !f.WithEvents:
		return "--since shows the core Events that happened before the start; add --with-events"
	case f.Resync && f.SyncLeftOut:
		return "--resync re-delivers objects as SYNC events, which --event-types leaves out; add SYNC to --event-types, or drop --resync"
	case f.NoBy && f.By:
		return "--by and --not-by filter on the field managers, which --no-by leaves unread; drop one"
	case f.On && f.FoldRollouts:
		return "--on keeps only events in which a transition happened, which are never folded: --fold-rollouts would change nothing; drop one (a sink's on= goes with folding)"
	}
	return ""
}

// FeaturesOf is req's Features with what req itself says filled in from it (types,
// names, namespaces, contexts' flags, selectors, --owned and its conditions): the rest
// (--resume, --ui, ...) the command put in req.Features.
func FeaturesOf(req Request) Features {
	f := req.Features
	f.Types, f.Names = len(req.Types), len(req.Names)
	f.Namespaces = nil
	if req.NamespaceGiven && !req.AllNamespaces {
		f.Namespaces, _ = namespaces(req.Namespace, true)
	}
	f.AllNamespaces, f.ExcludeNamespaces = req.AllNamespaces, len(req.ExcludeNamespaces) > 0
	f.ClusterFlags = req.ClusterFlags
	if f.Contexts == 0 && !req.AllContexts && !isPattern(req.Context) {
		f.Contexts = max(1, len(strings.Split(req.Context, ",")))
	}
	f.Selectors = req.LabelSelector != "" || req.FieldSelector != ""
	f.MetadataOnly, f.ShowSecrets = req.MetadataOnly, req.ShowSecrets
	f.Owned, f.OwnedTypes = req.Owned, len(req.OwnedTypes) > 0
	f.UntilRollout, f.UntilDeleted, f.UntilReady = req.UntilRollout, req.UntilDeleted, req.UntilReady
	return f
}
