package obfuscate_test

import (
	"fmt"

	"github.com/idforge/idforge/obfuscate"
)

func ExampleParseFormat() {
	// The spec comes from configuration; the key from a secret store,
	// never from the spec.
	key := []byte("0123456789abcdef0123456789abcdef") // use random bytes
	f, err := obfuscate.ParseFormat("feistel:bits=40+base62:min=7")
	if err != nil {
		panic(err)
	}
	if f, err = f.WithKey(key); err != nil {
		panic(err)
	}
	for id := int64(1000); id < 1003; id++ {
		s, _ := f.Encode(id)
		back, _ := f.Decode(s)
		fmt.Println(len(s), back == id)
	}
	fmt.Println(f)
	// Output:
	// 7 true
	// 7 true
	// 7 true
	// feistel:bits=40+base62:min=7
}

func ExampleBase62() {
	b, _ := obfuscate.NewBase62(obfuscate.Base62Settings{MinLength: 4})
	s, _ := b.Encode(1001)
	v, _ := b.Decode(s)
	_, err := b.Decode("0000G9") // not the canonical spelling
	fmt.Println(s, v, err != nil)
	// Output: 00G9 1001 true
}

func ExampleNew() {
	p, _ := obfuscate.New([]byte("0123456789abcdef0123456789abcdef"), 16)
	c, _ := p.Encode(42)
	v, _ := p.Decode(c)
	fmt.Println(c >= 0 && c < 1<<16, v)
	// Output: true 42
}
