package docker

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// hostCgroup is a sandbox's cgroup as the worker sees it on the host, where
// the worker shares the engine's PID namespace and cgroup file system (it
// runs beside its engine, as docs/design.md §5 has it). What it reads comes from
// the host's kernel: no process in the container can forge or stop it,
// unlike a helper exec'd into the container, and reading it costs
// microseconds where ContainerTop has the engine run ps.
type hostCgroup struct {
	id      string
	initPID int
	initUID int
	// dir is the container's cgroup directory; its cgroup.procs, and
	// those of any cgroup below it, list every process of the container.
	dir string
	// killFile is cgroup v2's cgroup.kill in dir, "" where the kernel
	// has none (before 5.14) or the hierarchy is cgroup v1.
	killFile string
	// init is the container's PID 1, held open (a pidfd on Linux) so
	// that a signal cannot reach another process that reused its PID.
	init *os.Process
}

// findHostCgroup finds the cgroup of the container id whose PID 1 the
// engine reports as initPID, running as initUID. It fails, and the caller
// falls back to asking the engine, when this process does not see the
// container's processes as the engine does: another PID namespace (the
// worker in a container without the host's /proc), a runtime whose
// processes are not the host's (gVisor's, Kata's: the host's initPID is
// then the runtime's own process, not the container's init user), or no
// cgroup file system mounted here.
func findHostCgroup(id string, initPID, initUID int) (*hostCgroup, error) {
	h := &hostCgroup{id: id, initPID: initPID, initUID: initUID}
	proc, err := os.FindProcess(initPID)
	if err != nil {
		return nil, err
	}
	// Checked after FindProcess holds the process: what is checked is the
	// process that will be signalled.
	if err := h.checkInit(); err != nil {
		proc.Release()
		return nil, err
	}
	h.init = proc
	return h, nil
}

// checkInit finds dir and checks that initPID is the container's init.
func (h *hostCgroup) checkInit() error {
	uids, err := processUIDs(h.initPID)
	if err != nil {
		return err
	}
	for _, u := range uids {
		if u != h.initUID {
			return fmt.Errorf("host process %d runs as uid %d, not the sandbox's init user %d", h.initPID, u, h.initUID)
		}
	}
	if ns, err := nsPID(h.initPID); err != nil || ns != 1 {
		return fmt.Errorf("host process %d is not the init of a PID namespace (%d, %v)", h.initPID, ns, err)
	}
	paths, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", h.initPID))
	if err != nil {
		return err
	}
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return err
	}
	h.dir = cgroupDir(string(paths), string(mounts), h.id)
	if h.dir == "" {
		return fmt.Errorf("the cgroup of host process %d, naming sandbox %.12s, is not mounted here", h.initPID, h.id)
	}
	pids, err := h.procs()
	if err != nil {
		return err
	}
	found := false
	for _, p := range pids {
		found = found || p == h.initPID
	}
	if !found {
		return fmt.Errorf("process %d is not in %s", h.initPID, h.dir)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "cgroup.kill")); err == nil {
		h.killFile = filepath.Join(h.dir, "cgroup.kill")
	}
	return nil
}

// cgroupDir resolves a process's cgroup (paths, as /proc/PID/cgroup gives
// it) against this process's mounts (mountinfo) to a directory, preferring
// the cgroup v2 hierarchy. It returns "" when no hierarchy is mounted
// here, or when the cgroup path does not name the container id (it is
// then not that container's process).
func cgroupDir(paths, mountinfo, id string) string {
	type hierarchy struct{ controllers, path string }
	var v2 *hierarchy
	var v1 []hierarchy
	for line := range strings.Lines(paths) {
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) != 3 || !strings.Contains(parts[2], id) {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			v2 = &hierarchy{path: parts[2]}
		} else if parts[1] != "" {
			v1 = append(v1, hierarchy{controllers: parts[1], path: parts[2]})
		}
	}
	v2Dir, v1Dir := "", ""
	for line := range strings.Lines(mountinfo) {
		// ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTIONS
		pre, post, ok := strings.Cut(strings.TrimSpace(line), " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(g) < 3 || strings.Contains(f[4], `\`) {
			continue
		}
		root, point := f[3], f[4]
		switch {
		case g[0] == "cgroup2" && v2 != nil && v2Dir == "":
			v2Dir = under(point, root, v2.path)
		case g[0] == "cgroup" && v1Dir == "":
			opts := strings.Split(g[2], ",")
			for _, h := range v1 {
				if v1Dir == "" && containsAll(opts, strings.Split(h.controllers, ",")) {
					v1Dir = under(point, root, h.path)
				}
			}
		}
	}
	if v2Dir != "" {
		return v2Dir
	}
	return v1Dir
}

// under is the directory of cgroup path in a hierarchy mounted at point
// whose root is the cgroup root; "" if path is not below root.
func under(point, root, path string) string {
	rel, ok := strings.CutPrefix(path, root)
	if !ok || (root != "/" && rel != "" && rel[0] != '/') {
		return ""
	}
	return filepath.Join(point, rel)
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		found := false
		for _, h := range have {
			found = found || h == w
		}
		if !found {
			return false
		}
	}
	return true
}

// procs lists the PIDs of every process in the cgroup and below it.
func (h *hostCgroup) procs() ([]int, error) {
	var pids []int
	err := filepath.WalkDir(h.dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() || e.Name() != "cgroup.procs" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for f := range bytes.FieldsSeq(data) {
			pid, err := strconv.Atoi(string(f))
			if err != nil {
				return fmt.Errorf("%s: %q", path, f)
			}
			pids = append(pids, pid)
		}
		return nil
	})
	return pids, err
}

// survivors counts the container's processes that do not run as its init
// user: every one is a command's.
//
// except, when not 0, is the resident starter's host PID: a known process
// of the command user that lives between commands.
func (h *hostCgroup) survivors(except int) (int, error) {
	pids, err := h.procs()
	if err != nil {
		return 0, fmt.Errorf("list the processes of sandbox %.12s on the host: %w", h.id, err)
	}
	left := 0
	for _, pid := range pids {
		if pid == h.initPID || pid == except {
			continue
		}
		uids, err := processUIDs(pid)
		if errors.Is(err, fs.ErrNotExist) {
			continue // gone meanwhile
		}
		if err != nil {
			return 0, err
		}
		for _, u := range uids {
			if u != h.initUID {
				left++
				break
			}
		}
	}
	return left, nil
}

// nsPID is host process pid's PID in its innermost PID namespace.
func nsPID(pid int) (int, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "NSpid:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				return strconv.Atoi(f[len(f)-1])
			}
		}
	}
	return 0, fmt.Errorf("/proc/%d/status has no NSpid line", pid)
}

// processUIDs returns the real, effective, saved and file-system uids of
// host process pid.
func processUIDs(pid int) ([]int, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		rest, ok := strings.CutPrefix(s.Text(), "Uid:")
		if !ok {
			continue
		}
		var uids []int
		for _, field := range strings.Fields(rest) {
			u, err := strconv.Atoi(field)
			if err != nil {
				return nil, fmt.Errorf("/proc/%d/status: uid %q", pid, field)
			}
			uids = append(uids, u)
		}
		if len(uids) == 0 {
			break
		}
		return uids, nil
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("/proc/%d/status has no Uid line", pid)
}

// kill SIGKILLs every process of the container from the host and waits
// until the cgroup is empty, at most wait. cgroup.kill kills the whole
// cgroup at once, fork-safe; without it, killing the container's PID 1
// from the host does the same: when a PID namespace's init dies, the
// kernel kills every other process in it, and no new one can be forked
// there. Both act on stopped processes and need nothing of the engine.
func (h *hostCgroup) kill(wait time.Duration) error {
	var err error
	if h.killFile != "" {
		err = os.WriteFile(h.killFile, []byte("1"), 0)
	}
	if h.killFile == "" || err != nil {
		if kerr := h.init.Kill(); kerr != nil && !errors.Is(kerr, os.ErrProcessDone) {
			return errors.Join(err, fmt.Errorf("kill the init process of sandbox %.12s from the host: %w", h.id, kerr))
		}
	}
	deadline := time.Now().Add(wait)
	for {
		pids, err := h.procs()
		if errors.Is(err, fs.ErrNotExist) || (err == nil && len(pids) == 0) {
			return nil // the engine removes the cgroup once the container stopped
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("sandbox %.12s killed from the host: %d processes still listed after %v (%v)", h.id, len(pids), wait, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// execStopped reports whether a process the engine started in the
// container for an exec (one whose parent is outside the container: the
// command's wrapper, a helper, or the runtime's init process that starts
// either), or a child of one (the command's timeout), is stopped or traced.
// Only another process of the command user can have stopped it (the
// sandbox has no terminal, so no job control stops it): while it is
// stopped, the command's time limit and its cleanup cannot act.
func (h *hostCgroup) execStopped() (bool, error) {
	pids, err := h.procs()
	if err != nil {
		return false, err
	}
	in := make(map[int]bool, len(pids))
	for _, pid := range pids {
		in[pid] = true
	}
	type proc struct {
		ppid    int
		stopped bool
	}
	procs := make(map[int]proc, len(pids))
	for _, pid := range pids {
		if pid == h.initPID || !h.commandUsers(pid) {
			continue
		}
		ppid, state, err := processState(pid)
		if err != nil {
			continue // gone meanwhile
		}
		procs[pid] = proc{ppid: ppid, stopped: state == 'T' || state == 't'}
	}
	root := func(pid int) bool { _, ok := procs[pid]; return ok && !in[procs[pid].ppid] }
	for pid, p := range procs {
		if p.stopped && (root(pid) || root(p.ppid)) {
			return true, nil
		}
	}
	return false, nil
}

// commandUsers reports whether host process pid runs, by any of its
// uids, as someone other than the init user.
func (h *hostCgroup) commandUsers(pid int) bool {
	uids, err := processUIDs(pid)
	if err != nil {
		return false
	}
	for _, u := range uids {
		if u != h.initUID {
			return true
		}
	}
	return false
}

// processState reads host process pid's parent and state from
// /proc/PID/stat ("PID (COMM) STATE PPID ..."; COMM may hold spaces and
// parentheses, so the fields are counted from its last ')').
func processState(pid int) (ppid int, state byte, err error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	i := bytes.LastIndexByte(data, ')')
	f := strings.Fields(string(data[i+1:]))
	if i < 0 || len(f) < 2 || len(f[0]) != 1 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: %q", pid, data)
	}
	ppid, err = strconv.Atoi(f[1])
	return ppid, f[0][0], err
}
