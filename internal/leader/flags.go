package leader

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Flags are --leader-elect and its settings, named as kube-controller-manager names
// its own: a command adds them (AddFlags), checks them (Validate), and makes the
// Elector's Config of them.
type Flags struct {
	Enabled       bool
	Namespace     string // "" for DefaultNamespace
	Name          string
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration
}

// FlagNames are the flags AddFlags adds, --leader-elect first.
var FlagNames = []string{"leader-elect", "leader-elect-namespace", "leader-elect-name",
	"leader-elect-lease-duration", "leader-elect-renew-deadline", "leader-elect-retry-period"}

// AddFlags adds the flags to fs.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&f.Enabled, "leader-elect", false, "stream only while holding a Lease, so that replicas (a Deployment) hand the stream over: the others stand by (see --leader-elect-*)")
	fs.StringVar(&f.Namespace, "leader-elect-namespace", "", "with --leader-elect: the Lease's namespace (default: the pod's, else the kubeconfig context's)")
	fs.StringVar(&f.Name, "leader-elect-name", DefaultName, "with --leader-elect: the Lease's name; replicas of one stream share it")
	fs.DurationVar(&f.LeaseDuration, "leader-elect-lease-duration", DefaultLeaseDuration, "with --leader-elect: how long a standby waits after the leader's last renewal before it takes over")
	fs.DurationVar(&f.RenewDeadline, "leader-elect-renew-deadline", DefaultRenewDeadline, "with --leader-elect: how long the leader tries to renew before it stops streaming and exits")
	fs.DurationVar(&f.RetryPeriod, "leader-elect-retry-period", DefaultRetryPeriod, "with --leader-elect: how often the leader renews and a standby tries to take over")
}

// Validate checks the flags: a setting without --leader-elect, a name the API server
// would refuse, or durations client-go would. changed reports whether a flag was given.
// The error is a usage error's message.
func (f *Flags) Validate(changed func(name string) bool) error {
	if !f.Enabled {
		for _, name := range FlagNames[1:] {
			if changed(name) {
				return fmt.Errorf("--%s applies with --leader-elect only; add --leader-elect", name)
			}
		}
		return nil
	}
	if f.Namespace != "" {
		if errs := validation.IsDNS1123Label(f.Namespace); len(errs) > 0 {
			return fmt.Errorf("--leader-elect-namespace %q: %s", f.Namespace, errs[0])
		}
	}
	if errs := validation.IsDNS1123Subdomain(f.Name); len(errs) > 0 {
		return fmt.Errorf("--leader-elect-name %q: %s", f.Name, errs[0])
	}
	return checkDurations(f.LeaseDuration, f.RenewDeadline, f.RetryPeriod)
}

// Config is the election the flags ask for, in namespace when --leader-elect-namespace
// was not given (DefaultNamespace).
func (f *Flags) Config(namespace string) Config {
	if f.Namespace != "" {
		namespace = f.Namespace
	}
	return Config{Namespace: namespace, Name: f.Name, LeaseDuration: f.LeaseDuration, RenewDeadline: f.RenewDeadline, RetryPeriod: f.RetryPeriod}
}

// serviceAccountNamespace is where a pod finds its namespace (client-go's in-cluster
// config reads the token beside it).
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// DefaultNamespace is where the Lease and a checkpoint in the cluster (--resume
// secret:NAME) are kept when no namespace is given: the pod's own (POD_NAMESPACE, as the
// chart sets it from the downward API, else its ServiceAccount's), else the namespace of
// the kubeconfig's current context (not -n, which says what to watch), else "default".
func DefaultNamespace(kubeconfig func() (clientcmdapi.Config, error)) string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	if b, err := os.ReadFile(serviceAccountNamespace); err == nil {
		if ns := strings.TrimSpace(string(b)); ns != "" {
			return ns
		}
	}
	if kubeconfig != nil {
		if cfg, err := kubeconfig(); err == nil {
			if c := cfg.Contexts[cfg.CurrentContext]; c != nil && c.Namespace != "" {
				return c.Namespace
			}
		}
	}
	return "default"
}
