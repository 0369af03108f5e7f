//go:build linux || darwin

package proctest

import "syscall"

// sessionAttr starts the process in a session of its own, its stdin (Spec.Terminal) its
// controlling terminal, as a shell's command has one.
func sessionAttr() (*syscall.SysProcAttr, error) {
	return &syscall.SysProcAttr{Setsid: true, Setctty: true}, nil
}
