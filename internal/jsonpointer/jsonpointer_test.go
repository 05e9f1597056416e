package jsonpointer

import "testing"

func TestFormat(t *testing.T) {
	tests := []struct {
		name string
		path []string
		want string
	}{
		{"whole document", nil, ""},
		{"one token", []string{"a"}, "/a"},
		{"nested", []string{"a", "0", "b"}, "/a/0/b"},
		{"empty token", []string{""}, "/"},
		{"tilde", []string{"m~n"}, "/m~0n"},
		{"slash", []string{"a/b"}, "/a~1b"},
		{"tilde before slash", []string{"~/"}, "/~0~1"},
		{"escaped-looking text", []string{"~1"}, "/~01"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Format(tt.path); got != tt.want {
				t.Errorf("Format(%q) = %q, want %q", tt.path, got, tt.want)
			}
		})
	}
}
