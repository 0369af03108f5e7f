package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"
	k8sversion "k8s.io/apimachinery/pkg/version"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/kubeevents/kubeevents/internal/informer"
	"github.com/kubeevents/kubeevents/internal/plan"
	"github.com/kubeevents/kubeevents/internal/resource"
)

// Set at release time with -ldflags "-X github.com/kubeevents/kubeevents/cmd.version=..."
// (Makefile, .goreleaser.yaml). When empty, the Go build information fills them in as
// far as it can (`go install ...@v1.2.3` records the version, a build in a git checkout
// the commit and its time).
var (
	version string
	commit  string
	date    string
)

// versionTimeout bounds the request for the server's version unless --request-timeout says
// otherwise.
const versionTimeout = 10 * time.Second

// VersionInfo is what `kubeevents version -o json` prints.
type VersionInfo struct {
	Version         string           `json:"version"`
	Commit          string           `json:"commit"`
	Date            string           `json:"date"`
	GoVersion       string           `json:"goVersion"`
	Platform        string           `json:"platform"`
	ClientGoVersion string           `json:"clientGoVersion"`
	ServerVersion   *k8sversion.Info `json:"serverVersion,omitempty"`
}

// buildVersion gathers the version of this binary.
func buildVersion() VersionInfo {
	bi, _ := debug.ReadBuildInfo()
	return versionFrom(bi)
}

// versionFrom fills in what -ldflags left empty from the Go build information (nil if
// there is none).
func versionFrom(bi *debug.BuildInfo) VersionInfo {
	v := VersionInfo{
		Version:         version,
		Commit:          commit,
		Date:            date,
		GoVersion:       runtime.Version(),
		Platform:        runtime.GOOS + "/" + runtime.GOARCH,
		ClientGoVersion: "unknown",
	}
	if bi != nil {
		if v.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision" && v.Commit == "":
				v.Commit = s.Value
				if len(v.Commit) > 12 {
					v.Commit = v.Commit[:12]
				}
			case s.Key == "vcs.time" && v.Date == "":
				v.Date = s.Value
			}
		}
		for _, dep := range bi.Deps {
			if dep.Path == "k8s.io/client-go" {
				v.ClientGoVersion = dep.Version
				if dep.Replace != nil && dep.Replace.Version != "" {
					v.ClientGoVersion = dep.Replace.Version
				}
			}
		}
	}
	if v.Version == "" {
		v.Version = "dev"
	}
	if v.Commit == "" {
		v.Commit = "unknown"
	}
	if v.Date == "" {
		v.Date = "unknown"
	}
	return v
}

// NewVersionCommand is `kubeevents version [--client] [-o json|yaml]`, in kubectl's
// form: the client's version, then the API server's (of the kubeconfig's cluster, or of
// -s/--server URL), unless --client.
func NewVersionCommand(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	var output string
	var clientOnly bool
	c := &cobra.Command{
		Use:   "version",
		Short: "Print the version of kubeevents and of the API server (--client: only kubeevents')",
		Example: `  # kubeevents' version and the version of the current context's API server
  kubeevents version

  # Only kubeevents' version, without connecting
  kubeevents version --client -o yaml`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if output != "" && output != "json" && output != "yaml" {
				return usageErrorf("-o %q: use json or yaml, or leave -o out for text", output)
			}
			v := buildVersion()
			var serverErr error
			if !clientOnly {
				if err := checkRequestTimeout(configFlags); err != nil {
					return err
				}
				v.ServerVersion, serverErr = serverVersion(configFlags)
				if c.Context().Err() != nil {
					return nil // interrupted while waiting for the server
				}
			}
			switch output {
			case "json", "yaml":
				b, err := json.MarshalIndent(v, "", "  ")
				if err == nil && output == "yaml" {
					b, err = yaml.JSONToYAML(b)
				}
				if err != nil {
					return err
				}
				fmt.Fprintf(streams.Out, "%s\n", bytes.TrimSuffix(b, []byte("\n")))
			default:
				fmt.Fprintf(streams.Out, "version:    %s\ncommit:     %s\nbuilt:      %s\ngo:         %s %s\nclient-go:  %s\n",
					v.Version, v.Commit, v.Date, v.GoVersion, v.Platform, v.ClientGoVersion)
				if v.ServerVersion != nil {
					fmt.Fprintf(streams.Out, "server:     %s\n", v.ServerVersion.GitVersion)
				}
			}
			return serverErr
		},
	}
	c.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		if err.Error() == "flag needs an argument: --server" {
			// The switch `version --server` of earlier releases.
			return usageErrorf("--server takes the API server's address (-s URL); the server's version is shown without any flag (--client leaves it out)")
		}
		return &UsageError{Err: err}
	})
	c.Flags().StringVarP(&output, "output", "o", "", "output format: json or yaml (default: text)")
	c.Flags().BoolVar(&clientOnly, "client", false, "only kubeevents' own version: do not ask the API server")
	_ = c.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]cobra.Completion{"json\tone JSON object", "yaml\tone YAML document"}, cobra.ShellCompDirectiveNoFileComp))
	return c
}

// versionTemplate is what `kubeevents --version` prints: one line, the version first.
const versionTemplate = "kubeevents version {{.Version}}\n"

// shortVersion is the root command's Version, for --version.
func shortVersion(v VersionInfo) string {
	return fmt.Sprintf("%s (commit %s, built %s, %s %s)", v.Version, v.Commit, v.Date, v.GoVersion, v.Platform)
}

// serverVersion asks the API server for its version; errors are one line.
func serverVersion(configFlags *genericclioptions.ConfigFlags) (*k8sversion.Info, error) {
	restConfig, err := configFlags.ToRESTConfig()
	if err != nil {
		return nil, plan.KubeconfigError(err)
	}
	restConfig.WarningHandler = rest.NoWarnings{}
	if restConfig.Timeout == 0 {
		restConfig.Timeout = versionTimeout
	}
	client, err := discovery.NewDiscoveryClientForConfig(restConfig)
	if err != nil {
		return nil, plan.KubeconfigError(err)
	}
	info, err := client.ServerVersion()
	if err != nil {
		err = informer.APIError(err, "get the version of", resource.Resource{})
		return nil, fmt.Errorf("server version: %s", oneLine(err))
	}
	return info, nil
}
