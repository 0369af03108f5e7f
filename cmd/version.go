package cmd

import (
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

	"github.com/kubeevents/kubeevents/internal/informer"
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

// versionTimeout bounds `version --server` unless --request-timeout says otherwise.
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

// NewVersionCommand is `kubeevents version [--server] [-o json]`.
func NewVersionCommand(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	var output string
	var server bool
	c := &cobra.Command{
		Use:   "version",
		Short: "Print the version of kubeevents (and with --server, of the API server)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if output != "" && output != "json" {
				return usageErrorf("-o %q: use json, or leave -o out for text", output)
			}
			v := buildVersion()
			var serverErr error
			if server {
				if err := checkRequestTimeout(configFlags); err != nil {
					return err
				}
				v.ServerVersion, serverErr = serverVersion(configFlags)
			}
			if output == "json" {
				b, err := json.MarshalIndent(v, "", "  ")
				if err != nil {
					return err
				}
				fmt.Fprintf(streams.Out, "%s\n", b)
			} else {
				fmt.Fprintf(streams.Out, "version:    %s\ncommit:     %s\nbuilt:      %s\ngo:         %s %s\nclient-go:  %s\n",
					v.Version, v.Commit, v.Date, v.GoVersion, v.Platform, v.ClientGoVersion)
				if v.ServerVersion != nil {
					fmt.Fprintf(streams.Out, "server:     %s\n", v.ServerVersion.GitVersion)
				}
			}
			return serverErr
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "", "output format: json (default: text)")
	c.Flags().BoolVar(&server, "server", false, "also print the API server's version (for this command --server is this switch, not kubectl's API server address: pick the cluster with --context or --kubeconfig)")
	_ = c.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]cobra.Completion{"json\tone JSON object"}, cobra.ShellCompDirectiveNoFileComp))
	return c
}

// serverVersion asks the API server for its version; errors are one line.
func serverVersion(configFlags *genericclioptions.ConfigFlags) (*k8sversion.Info, error) {
	restConfig, err := configFlags.ToRESTConfig()
	if err != nil {
		return nil, kubeconfigError(err)
	}
	restConfig.WarningHandler = rest.NoWarnings{}
	if restConfig.Timeout == 0 {
		restConfig.Timeout = versionTimeout
	}
	client, err := discovery.NewDiscoveryClientForConfig(restConfig)
	if err != nil {
		return nil, kubeconfigError(err)
	}
	info, err := client.ServerVersion()
	if err != nil {
		err = informer.APIError(err, "get the version of", informer.Resource{})
		return nil, fmt.Errorf("server version: %s", oneLine(err))
	}
	return info, nil
}
