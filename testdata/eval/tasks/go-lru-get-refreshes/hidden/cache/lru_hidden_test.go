package cache

import "testing"

func TestHiddenGetMakesEntryRecent(t *testing.T) {
	c := New(2)
	c.Put("a", 1)
	c.Put("b", 2)
	c.Get("a")
	c.Put("c", 3)
	if _, ok := c.Get("a"); !ok {
		t.Fatal("a was evicted although it was read after b was written")
	}
	if _, ok := c.Get("b"); ok {
		t.Fatal("b should have been evicted as the least recently used")
	}
}
