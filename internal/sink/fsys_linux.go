package sink

import "golang.org/x/sys/unix"

// virtualFileSystems are the Linux file systems that show the kernel's state as files
// and refuse to create new ones, by their statfs magic numbers.
var virtualFileSystems = map[int64]string{
	unix.PROC_SUPER_MAGIC:    "proc",
	unix.SYSFS_MAGIC:         "sysfs",
	unix.CGROUP_SUPER_MAGIC:  "cgroup",
	unix.CGROUP2_SUPER_MAGIC: "cgroup2",
	unix.DEBUGFS_MAGIC:       "debugfs",
	unix.SECURITYFS_MAGIC:    "securityfs",
	unix.TRACEFS_MAGIC:       "tracefs",
	unix.EFIVARFS_MAGIC:      "efivarfs",
	unix.BPF_FS_MAGIC:        "bpf",
}

// virtualFileSystem names the file system of dir when it is one of those, else "".
func virtualFileSystem(dir string) string {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return ""
	}
	return virtualFileSystems[int64(st.Type)]
}
