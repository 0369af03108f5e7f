#!/usr/bin/env bash
# make release-check: validates .goreleaser.yaml, builds a full snapshot release into
# dist/ (nothing is published) and checks what it built: the archive for each of the six
# os/arch pairs with the binary, README.md, LICENSE, completions/ and docs/; checksums.txt; the
# .deb and .rpm packages; the krew manifest; the container image (kos; built offline into
# an OCI layout, dist/image, by hack/tools/image, since goreleaser's snapshot would load it
# into a docker daemon from a base pulled from a registry); the Helm chart, linted and
# packaged into dist/. goreleaser is installed from the Go module proxy once, cached by
# version under ${XDG_CACHE_HOME:-~/.cache}/kubeevents/tools/; helm is built by hack/helm.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

GORELEASER_VERSION=v2.15.1
GO=${GO:-go}
tools=${XDG_CACHE_HOME:-$HOME/.cache}/kubeevents/tools/goreleaser-$GORELEASER_VERSION
goreleaser=$tools/goreleaser
if [[ ! -x $goreleaser ]]; then
	echo "release-check: installing goreleaser $GORELEASER_VERSION into $tools (once, takes minutes)" >&2
	GOBIN=$tools "$GO" install "github.com/goreleaser/goreleaser/v2@$GORELEASER_VERSION"
fi

start=$SECONDS
"$goreleaser" check
"$goreleaser" release --snapshot --clean --skip=ko
echo "release-check: goreleaser took $((SECONDS - start))s" >&2

failed=0
fail() {
	echo "release-check: FAIL: $*" >&2
	failed=1
}

version=$(sed -n 's/.*"version":"\([^"]*\)".*/\1/p' dist/metadata.json)
[[ -n $version ]] || { echo "release-check: no version in dist/metadata.json" >&2; exit 1; }
echo "release-check: snapshot version $version" >&2

sha256() {
	if command -v sha256sum >/dev/null; then sha256sum "$1"; else shasum -a 256 "$1"; fi | cut -d' ' -f1
}

# checksummed NAME: checksums.txt lists NAME with its actual sha256.
checksummed() {
	local want got
	want=$(sha256 "dist/$1")
	got=$(awk -v f="$1" '$2 == f { print $1 }' dist/checksums.txt)
	[[ $got == "$want" ]] || fail "checksums.txt: $1 has ${got:-no entry}, want $want"
}

completions=(completions/kubeevents.bash completions/_kubeevents completions/kubeevents.fish completions/kubeevents.ps1 completions/kubectl_complete-tail_resources)
# README links to the docs pages: every archive and package carries them.
docs=(docs/install.md docs/output.md docs/sinks.md)

[[ -f dist/checksums.txt ]] || fail "no dist/checksums.txt"
for os in linux darwin windows; do
	for arch in amd64 arm64; do
		exe=kubeevents
		archive=kubeevents_${version}_${os}_${arch}.tar.gz
		if [[ $os == windows ]]; then
			exe=kubeevents.exe
			archive=kubeevents_${version}_${os}_${arch}.zip
		fi
		if [[ ! -f dist/$archive ]]; then
			fail "missing archive dist/$archive"
			continue
		fi
		if [[ $archive == *.zip ]]; then
			listing=$(unzip -Z1 "dist/$archive")
		else
			listing=$(tar -tzf "dist/$archive")
		fi
		for f in "$exe" README.md LICENSE "${completions[@]}" "${docs[@]}"; do
			grep -qxF "$f" <<<"$listing" || fail "$archive lacks $f"
		done
		if [[ $archive == *.tar.gz ]]; then
			tar -tvzf "dist/$archive" completions/kubectl_complete-tail_resources | grep -q '^-rwx' ||
				fail "$archive: completions/kubectl_complete-tail_resources is not executable"
		fi
		checksummed "$archive"
	done
done

# The packages: one .deb and one .rpm per Linux architecture.
shopt -s nullglob
for arch in amd64 arm64; do
	rpmarch=$([[ $arch == amd64 ]] && echo x86_64 || echo aarch64)
	debs=(dist/kubeevents_*_"$arch".deb)
	rpms=(dist/kubeevents-*."$rpmarch".rpm)
	[[ ${#debs[@]} == 1 ]] || fail "want one .deb for $arch, found ${#debs[@]}"
	[[ ${#rpms[@]} == 1 ]] || fail "want one .rpm for $rpmarch, found ${#rpms[@]}"
	for deb in "${debs[@]}"; do
		checksummed "${deb#dist/}"
		if command -v dpkg-deb >/dev/null; then
			contents=$(dpkg-deb -c "$deb")
			for f in ./usr/bin/kubeevents ./usr/bin/kubectl-tail_resources ./usr/bin/kubectl_complete-tail_resources \
				./usr/share/bash-completion/completions/kubeevents ./usr/share/zsh/vendor-completions/_kubeevents \
				./usr/share/fish/vendor_completions.d/kubeevents.fish ./usr/share/doc/kubeevents/README.md \
				"${docs[@]/#/./usr/share/doc/kubeevents/}"; do
				grep -qE " $f( |$)" <<<"$contents" || fail "${deb#dist/} does not install ${f#.}"
			done
		else
			echo "release-check: no dpkg-deb; not listing ${deb#dist/}" >&2
		fi
	done
	for rpm in "${rpms[@]}"; do
		checksummed "${rpm#dist/}"
		[[ $(head -c4 "$rpm" | od -An -tx1 | tr -d ' \n') == edabeedb ]] || fail "${rpm#dist/} is not an RPM file"
		if command -v rpm >/dev/null; then
			contents=$(rpm -qlp "$rpm" 2>/dev/null)
			for f in /usr/bin/kubeevents /usr/bin/kubectl-tail_resources /usr/share/bash-completion/completions/kubeevents \
				/usr/share/zsh/site-functions/_kubeevents /usr/share/fish/vendor_completions.d/kubeevents.fish; do
				grep -qxF "$f" <<<"$contents" || fail "${rpm#dist/} does not install $f"
			done
		fi
	done
done

# The krew manifest: the six platforms, each pointing at its archive and checksum.
manifest=dist/krew/tail-resources.yaml
if [[ -f $manifest ]]; then
	[[ $(grep -c 'uri: https://github.com/kubeevents/kubeevents/releases/download/' "$manifest") == 6 ]] ||
		fail "$manifest does not list six platforms"
	grep -q '^  name: tail-resources$' "$manifest" || fail "$manifest: plugin name is not tail-resources"
	for sum in $(sed -n 's/^ *sha256: *//p' "$manifest"); do
		grep -q "^$sum " dist/checksums.txt || fail "$manifest: sha256 $sum matches no archive"
	done
else
	fail "no krew manifest $manifest"
fi

# The binary for this machine runs, knows its version, and is the plugin under its name.
host=$("$GO" env GOOS)_$("$GO" env GOARCH)
bin=$(find dist -path "dist/kubeevents_${host}*/kubeevents" -type f | head -1)
if [[ -n $bin ]]; then
	"$bin" version --client | grep -qx "version:    $version" || fail "$bin version --client does not say $version"
	tmp=$(mktemp -d)
	ln -s "$PWD/$bin" "$tmp/kubectl-tail_resources"
	"$tmp/kubectl-tail_resources" watch --help | grep -q '^  kubectl tail-resources watch TYPE' ||
		fail "run as kubectl-tail_resources, help does not say kubectl tail-resources"
	rm -rf "$tmp"
fi

# The container image: the linux binaries goreleaser built, in an OCI layout (and a
# tarball of it) for linux/amd64 and linux/arm64, non-root, no shell; its amd64 binary
# runs and knows its version.
mkdir -p dist/image-bin/linux_amd64 dist/image-bin/linux_arm64
for arch in amd64 arm64; do
	built=$(find dist -path "dist/kubeevents_linux_${arch}*/kubeevents" -type f | head -1)
	if [[ -z $built ]]; then
		fail "no linux/$arch binary in dist/ for the image"
		continue
	fi
	cp "$built" "dist/image-bin/linux_$arch/kubeevents"
done
if (cd hack/tools/image && GOFLAGS=-mod=readonly "$GO" run . -binaries ../../../dist/image-bin -out ../../../dist/image -tag "$version" &&
	GOFLAGS=-mod=readonly "$GO" run . -verify -out ../../../dist/image -extract ../../../dist/image-bin/from-image); then
	tar -C dist/image -cf "dist/kubeevents_${version}_image.oci.tar" .
	if [[ $("$GO" env GOARCH) == amd64 ]]; then
		dist/image-bin/from-image version --client | grep -qx "version:    $version" || fail "the image's binary does not say $version"
	fi
else
	fail "the container image (hack/tools/image)"
fi

# The Helm chart: lints strictly and packages.
helm=$(hack/helm.sh)
"$helm" lint --strict charts/kubeevents >/dev/null || fail "helm lint charts/kubeevents"
"$helm" package charts/kubeevents -d dist >/dev/null || fail "helm package charts/kubeevents"
chart=$(find dist -maxdepth 1 -name 'kubeevents-*.tgz' | head -1)
[[ -n $chart ]] || fail "no chart package in dist/"

if ((failed)); then
	echo "release-check: FAILED" >&2
	exit 1
fi
echo "release-check: OK: 6 archives, checksums.txt, 2 .deb, 2 .rpm, krew manifest, image (linux/amd64, linux/arm64), chart ($((SECONDS - start))s)" >&2
