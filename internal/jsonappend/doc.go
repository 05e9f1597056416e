// Package jsonappend appends JSON to a byte slice without reflection, byte
// for byte what encoding/json writes: strings, string lists, decoded JSON
// values and objects in key order. The trace record and the views are
// encoded with it on the decision path. It imports nothing of warden.
package jsonappend
