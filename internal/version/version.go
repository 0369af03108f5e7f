// Package version is what kubeevents says about its own build and asks the API server
// for: `kubeevents version`, `--version` and the User-Agent of every request.
package version

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	k8sversion "k8s.io/apimachinery/pkg/version"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/kubeevents/kubeevents/internal/informer"
	"github.com/kubeevents/kubeevents/internal/plan"
	"github.com/kubeevents/kubeevents/internal/resource"
)

// Set at release time with -ldflags "-X github.com/kubeevents/kubeevents/internal/version.version=..."
// (Makefile, .goreleaser.yaml). When empty, the Go build information fills them in as
// far as it can (`go install ...@v1.2.3` records the version, a build in a git checkout
// the commit and its time).
var (
	version string
	commit  string
	date    string
)

// serverTimeout bounds the request for the server's version unless --request-timeout
// says otherwise.
const serverTimeout = 10 * time.Second

// Info is what `kubeevents version -o json` prints.
type Info struct {
	Version         string           `json:"version"`
	Commit          string           `json:"commit"`
	Date            string           `json:"date"`
	GoVersion       string           `json:"goVersion"`
	Platform        string           `json:"platform"`
	ClientGoVersion string           `json:"clientGoVersion"`
	ServerVersion   *k8sversion.Info `json:"serverVersion,omitempty"`
}

// Get gathers the version of this binary.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return from(bi)
}

// from fills in what -ldflags left empty from the Go build information (nil if there is
// none).
func from(bi *debug.BuildInfo) Info {
	v := Info{
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

// Template is what `kubeevents --version` prints (cobra's version template): one line,
// the version first.
const Template = "kubeevents version {{.Version}}\n"

// Short is the root command's Version, for --version.
func Short(v Info) string {
	return fmt.Sprintf("%s (commit %s, built %s, %s %s)", v.Version, v.Commit, v.Date, v.GoVersion, v.Platform)
}

// UserAgent is what the API server (and its audit log) sees, in kubectl's form:
// "kubeevents/v1.2.3 (linux/amd64) kubeevents/abc1234".
func UserAgent(v Info) string {
	commit := v.Commit
	if len(commit) > 7 {
		commit = commit[:7]
	}
	return fmt.Sprintf("kubeevents/%s (%s/%s) kubeevents/%s", v.Version, runtime.GOOS, runtime.GOARCH, commit)
}

// Write prints v as `kubeevents version -o output` does: output is "json", "yaml" or
// "" (text).
func Write(w io.Writer, v Info, output string) error {
	switch output {
	case "json", "yaml":
		b, err := json.MarshalIndent(v, "", "  ")
		if err == nil && output == "yaml" {
			b, err = yaml.JSONToYAML(b)
		}
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", bytes.TrimSuffix(b, []byte("\n")))
		return err
	}
	_, err := fmt.Fprintf(w, "version:    %s\ncommit:     %s\nbuilt:      %s\ngo:         %s %s\nclient-go:  %s\n",
		v.Version, v.Commit, v.Date, v.GoVersion, v.Platform, v.ClientGoVersion)
	if err == nil && v.ServerVersion != nil {
		_, err = fmt.Fprintf(w, "server:     %s\n", v.ServerVersion.GitVersion)
	}
	return err
}

// Server asks the API server of getter's cluster for its version; errors are one line.
func Server(getter genericclioptions.RESTClientGetter) (*k8sversion.Info, error) {
	restConfig, err := getter.ToRESTConfig()
	if err != nil {
		return nil, plan.KubeconfigError(err)
	}
	restConfig.WarningHandler = rest.NoWarnings{}
	if restConfig.Timeout == 0 {
		restConfig.Timeout = serverTimeout
	}
	client, err := discovery.NewDiscoveryClientForConfig(restConfig)
	if err != nil {
		return nil, plan.KubeconfigError(err)
	}
	info, err := client.ServerVersion()
	if err != nil {
		err = informer.APIError(err, "get the version of", resource.Resource{})
		return nil, fmt.Errorf("server version: %s", strings.Join(strings.Fields(err.Error()), " "))
	}
	return info, nil
}
