//go:build !unix

package sink

import (
	"os"
	"os/exec"
)

// ownGroup leaves cmd as exec makes it: a cancelled run kills the command alone.
func ownGroup(*exec.Cmd) {}

// killGroup kills p.
func killGroup(p *os.Process) error { return p.Kill() }
