//go:build unix

package sink

import (
	"os"
	"os/exec"
	"syscall"
)

// ownGroup makes cmd the leader of a process group of its own, and has a cancelled run
// (a timeout, an abort) killed with its whole group.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd.Process) }
}

// killGroup kills the process group p leads, p with it.
func killGroup(p *os.Process) error {
	// The group's id is its leader's pid; a negative pid names the group.
	if err := syscall.Kill(-p.Pid, syscall.SIGKILL); err != nil {
		return p.Kill()
	}
	return nil
}
