// Command reqs sends a fixed number of GET requests over a fixed number
// of keep-alive connections and checks every answer is a 200: the load
// of bench/peers/cost.sh, which measures what a server spends per
// request (instructions under callgrind, CPU time), so the load must be
// the same for every server and every run, which wrk's (a duration, not
// a count) is not.
//
//	go run ./reqs -n 20000 -c 4 http://127.0.0.1:18081/
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
)

func main() {
	n := flag.Int("n", 10000, "requests in all")
	conns := flag.Int("c", 4, "keep-alive connections, each sending its share one after another")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: reqs [-n N] [-c C] http://host:port/path")
		os.Exit(2)
	}
	u, err := url.Parse(flag.Arg(0))
	if err != nil || u.Scheme != "http" {
		fmt.Fprintln(os.Stderr, "reqs: want an http:// URL")
		os.Exit(2)
	}
	req := []byte("GET " + u.RequestURI() + " HTTP/1.1\r\nHost: " + u.Host + "\r\nUser-Agent: reqs\r\n\r\n")
	var wg sync.WaitGroup
	errs := make(chan error, *conns)
	for i := range *conns {
		share := *n / *conns
		if i < *n%*conns {
			share++
		}
		wg.Go(func() {
			if err := send(u.Host, req, share); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		fmt.Fprintln(os.Stderr, "reqs:", err)
		os.Exit(1)
	}
}

// send sends req count times over one connection, reading each answer
// (its headers and a Content-Length body) before sending the next.
func send(host string, req []byte, count int) error {
	c, err := net.Dial("tcp", host)
	if err != nil {
		return err
	}
	defer c.Close()
	r := bufio.NewReader(c)
	for range count {
		if _, err := c.Write(req); err != nil {
			return err
		}
		status, err := r.ReadString('\n')
		if err != nil {
			return err
		}
		if !strings.HasPrefix(status, "HTTP/1.1 200 ") {
			return errors.New("answer " + strings.TrimSpace(status))
		}
		length := -1
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return err
			}
			line = strings.TrimRight(line, "\r\n")
			if line == "" {
				break
			}
			if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(k, "Content-Length") {
				if length, err = strconv.Atoi(strings.TrimSpace(v)); err != nil {
					return err
				}
			}
		}
		if length < 0 {
			return errors.New("answer without Content-Length")
		}
		if _, err := r.Discard(length); err != nil {
			return fmt.Errorf("body: %w", io.ErrUnexpectedEOF)
		}
	}
	return nil
}
