//go:build !(linux || darwin)

package proctest

import (
	"errors"
	"syscall"
)

func sessionAttr() (*syscall.SysProcAttr, error) {
	return nil, errors.New("proctest: Spec.Terminal is for Linux and macOS")
}
