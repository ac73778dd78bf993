package sandbox

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// HandOver makes the work tree writable by the sandbox's command user:
// as root by giving it the files (never following symlinks), otherwise,
// unless we are that user, by opening the permissions.
func HandOver(dir string, uid, gid int) error {
	euid := os.Geteuid()
	if euid == uid {
		return nil
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if euid == 0 {
			return os.Lchown(p, uid, gid)
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.Chmod(p, 0o777)
		}
		return os.Chmod(p, info.Mode().Perm()|0o666)
	})
	if err != nil {
		return fmt.Errorf("hand the work tree to the sandbox user: %w", err)
	}
	return nil
}
