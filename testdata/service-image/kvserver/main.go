// Command kvserver is the test suite's stand-in for a database service: a
// line protocol on TCP port 6379 (PING, SET key value, GET key), built
// static and shipped alone in a FROM scratch image. `kvserver -check`
// exits 0 when the server answers, for the service's health command.
// `FILL path bytes` writes that many bytes to path (its directories made),
// as a database filling its disk would, and answers OK or ERR and why.
package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

const addr = ":6379"

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-check" {
		c, err := net.Dial("tcp", "127.0.0.1"+addr)
		if err != nil {
			os.Exit(1)
		}
		fmt.Fprintln(c, "PING")
		line, _ := bufio.NewReader(c).ReadString('\n')
		if line != "PONG\n" {
			os.Exit(1)
		}
		return
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("kvserver: ready on", addr)
	var mu sync.Mutex
	data := map[string]string{}
	for {
		c, err := ln.Accept()
		if err != nil {
			continue
		}
		go func() {
			defer c.Close()
			sc := bufio.NewScanner(c)
			for sc.Scan() {
				f := strings.Fields(sc.Text())
				mu.Lock()
				switch {
				case len(f) == 1 && f[0] == "PING":
					fmt.Fprintln(c, "PONG")
				case len(f) == 3 && f[0] == "SET":
					data[f[1]] = f[2]
					fmt.Println("kvserver: SET", f[1])
					fmt.Fprintln(c, "OK")
				case len(f) == 2 && f[0] == "GET":
					fmt.Fprintln(c, data[f[1]])
				case len(f) == 3 && f[0] == "FILL":
					fmt.Fprintln(c, fill(f[1], f[2]))
				default:
					fmt.Fprintln(c, "ERR")
				}
				mu.Unlock()
			}
		}()
	}
}

// fill writes n zero bytes to path, a MiB at a time.
func fill(path, n string) string {
	var size int64
	if _, err := fmt.Sscan(n, &size); err != nil {
		return "ERR " + err.Error()
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "ERR " + err.Error()
	}
	f, err := os.Create(path)
	if err != nil {
		return "ERR " + err.Error()
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	for size > 0 {
		chunk := buf[:min(size, int64(len(buf)))]
		if _, err := f.Write(chunk); err != nil {
			return "ERR " + err.Error()
		}
		size -= int64(len(chunk))
	}
	if err := f.Sync(); err != nil {
		return "ERR " + err.Error()
	}
	return "OK"
}
