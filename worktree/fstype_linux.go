package worktree

import "golang.org/x/sys/unix"

// tickingFS reports whether the filesystem holding dir is one whose
// clock hg 7 waits for before filtering mtimes (merge_utils/update.py:
// any it can name but NFS).
func tickingFS(dir string) bool {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return false
	}
	return st.Type != unix.NFS_SUPER_MAGIC
}
