// Command image builds kubeevents' container image without docker or a registry, as
// goreleaser's kos (ko) builds it for a release: the static binary for linux/amd64 and
// linux/arm64 at /ko-app/kubeevents, run as the non-root user 65532 on a distroless-like
// base (no shell, no package manager: /etc/passwd and /etc/group with root and nonroot,
// the CA certificates, /tmp, nonroot's home). The base is made here from the host's CA
// bundle rather than pulled, so that make release-check builds it offline; the images go
// into an OCI image layout (a directory, and a tarball of it), one index for both
// platforms, never pushed.
//
//	go run . -binaries DIR -out dist/image -tag VERSION
//	go run . -verify -out dist/image -extract FILE
//
// DIR holds linux_amd64/kubeevents and linux_arm64/kubeevents (goreleaser's dist/).
package main

import (
	"archive/tar"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

func main() {
	binaries := flag.String("binaries", "", "directory with linux_amd64/kubeevents and linux_arm64/kubeevents")
	out := flag.String("out", "dist/image", "the OCI image layout to write (replaced)")
	tag := flag.String("tag", "dev", "the image's version (org.opencontainers.image.version)")
	cacerts := flag.String("ca-certificates", "/etc/ssl/certs/ca-certificates.crt", "the CA bundle the base carries")
	verifyOnly := flag.Bool("verify", false, "check the layout at -out instead: both platforms, non-root, no shell; -extract FILE writes the linux/amd64 binary out of it")
	extract := flag.String("extract", "", "with -verify: where to write the image's linux/amd64 binary")
	flag.Parse()
	var err error
	if *verifyOnly {
		err = verify(*out, *extract)
	} else {
		err = build(*binaries, *out, *tag, *cacerts)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

// epoch is every file's and the image's time: the same inputs make the same image.
var epoch = time.Unix(0, 0).UTC()

const user = "65532"

func build(binaries, out, tag, cacerts string) error {
	certs, err := os.ReadFile(cacerts)
	if err != nil {
		return fmt.Errorf("the base's CA certificates: %w", err)
	}
	base, err := layer([]file{
		{name: "etc/", mode: 0o755, dir: true},
		{name: "etc/passwd", mode: 0o644, data: []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
		{name: "etc/group", mode: 0o644, data: []byte("root:x:0:\nnonroot:x:65532:\n")},
		{name: "etc/ssl/", mode: 0o755, dir: true},
		{name: "etc/ssl/certs/", mode: 0o755, dir: true},
		{name: "etc/ssl/certs/ca-certificates.crt", mode: 0o644, data: certs},
		{name: "home/", mode: 0o755, dir: true},
		{name: "home/nonroot/", mode: 0o700, dir: true, uid: 65532},
		{name: "tmp/", mode: 0o1777, dir: true},
	})
	if err != nil {
		return err
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, arch := range []string{"amd64", "arm64"} {
		bin, err := os.ReadFile(filepath.Join(binaries, "linux_"+arch, "kubeevents"))
		if err != nil {
			return err
		}
		app, err := layer([]file{
			{name: "ko-app/", mode: 0o755, dir: true},
			{name: "ko-app/kubeevents", mode: 0o755, data: bin},
		})
		if err != nil {
			return err
		}
		img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), base, app)
		if err != nil {
			return err
		}
		img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
		cfg, err := img.ConfigFile()
		if err != nil {
			return err
		}
		cfg = cfg.DeepCopy()
		cfg.OS, cfg.Architecture, cfg.Created = "linux", arch, v1.Time{Time: epoch}
		cfg.Config.User = user
		cfg.Config.WorkingDir = "/home/nonroot"
		cfg.Config.Entrypoint = []string{"/ko-app/kubeevents"}
		cfg.Config.Env = []string{"PATH=/ko-app", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt", "HOME=/home/nonroot"}
		cfg.Config.Labels = map[string]string{
			"org.opencontainers.image.title":   "kubeevents",
			"org.opencontainers.image.source":  "https://github.com/kubeevents/kubeevents",
			"org.opencontainers.image.version": tag,
		}
		if img, err = mutate.ConfigFile(img, cfg); err != nil {
			return err
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: arch}}})
	}
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	p, err := layout.Write(out, empty.Index)
	if err != nil {
		return err
	}
	if err := p.AppendIndex(idx, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": tag})); err != nil {
		return err
	}
	digest, err := idx.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("%s %s\n", out, digest)
	return nil
}

type file struct {
	name string
	mode int64
	dir  bool
	uid  int
	data []byte
}

// layer is a tar layer of files, owned by root unless said, dated epoch.
func layer(files []file) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		h := &tar.Header{Name: f.name, Mode: f.mode, ModTime: epoch, Uid: f.uid, Gid: f.uid, Format: tar.FormatPAX}
		if f.dir {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(f.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil },
		tarball.WithMediaType(types.OCILayer))
}

// verify checks the layout the way a cluster would see the image: one index with
// linux/amd64 and linux/arm64, each run as 65532 with the binary as entrypoint, no
// shell in any layer; it writes the amd64 binary to extract, for the caller to run.
func verify(dir, extract string) error {
	p, err := layout.FromPath(dir)
	if err != nil {
		return err
	}
	top, err := p.ImageIndex()
	if err != nil {
		return err
	}
	topManifest, err := top.IndexManifest()
	if err != nil {
		return err
	}
	if len(topManifest.Manifests) != 1 {
		return fmt.Errorf("%s holds %d entries, want one index", dir, len(topManifest.Manifests))
	}
	idx, err := top.ImageIndex(topManifest.Manifests[0].Digest)
	if err != nil {
		return err
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, desc := range m.Manifests {
		arch := desc.Platform.Architecture
		seen[desc.Platform.OS+"/"+arch] = true
		img, err := idx.Image(desc.Digest)
		if err != nil {
			return err
		}
		cfg, err := img.ConfigFile()
		if err != nil {
			return err
		}
		if cfg.Config.User != user || len(cfg.Config.Entrypoint) != 1 || cfg.Config.Entrypoint[0] != "/ko-app/kubeevents" || cfg.Architecture != arch {
			return fmt.Errorf("linux/%s: user %q, entrypoint %v, architecture %s; want %s, [/ko-app/kubeevents], %s", arch, cfg.Config.User, cfg.Config.Entrypoint, cfg.Architecture, user, arch)
		}
		layers, err := img.Layers()
		if err != nil {
			return err
		}
		for _, l := range layers {
			rc, err := l.Uncompressed()
			if err != nil {
				return err
			}
			tr := tar.NewReader(rc)
			for {
				h, err := tr.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					return err
				}
				switch h.Name {
				case "bin/sh", "usr/bin/sh", "bin/bash":
					return fmt.Errorf("linux/%s: a shell, %s, in the image", arch, h.Name)
				case "ko-app/kubeevents":
					if arch == "amd64" && extract != "" {
						f, err := os.OpenFile(extract, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
						if err != nil {
							return err
						}
						if _, err := io.Copy(f, tr); err != nil {
							return err
						}
						if err := f.Close(); err != nil {
							return err
						}
					}
				}
			}
			_ = rc.Close()
		}
	}
	if !seen["linux/amd64"] || !seen["linux/arm64"] || len(seen) != 2 {
		return fmt.Errorf("platforms %v, want linux/amd64 and linux/arm64", seen)
	}
	fmt.Printf("%s: linux/amd64 and linux/arm64, user %s, entrypoint /ko-app/kubeevents, no shell\n", dir, user)
	return nil
}
