// Package embedtest holds small programs that embed the Guardian SDK with
// one trace backend each, and the tests that check what they link: a
// program gets a backend by importing its package (package backend), and
// links no other.
package embedtest
