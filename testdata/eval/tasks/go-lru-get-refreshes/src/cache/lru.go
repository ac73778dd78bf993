// Package cache is a small in-memory LRU cache.
package cache

import "container/list"

type entry struct {
	key   string
	value int
}

// LRU is a fixed-capacity cache that evicts the least recently used entry.
type LRU struct {
	cap   int
	order *list.List // front: most recent
	items map[string]*list.Element
}

// New returns an empty cache holding at most capacity entries.
func New(capacity int) *LRU {
	return &LRU{cap: capacity, order: list.New(), items: map[string]*list.Element{}}
}

// Get returns the value stored under key.
func (c *LRU) Get(key string) (int, bool) {
	el, ok := c.items[key]
	if !ok {
		return 0, false
	}
	return el.Value.(*entry).value, true
}

// Put stores value under key, evicting the least recently used entry when
// the cache is full.
func (c *LRU) Put(key string, value int) {
	if el, ok := c.items[key]; ok {
		el.Value.(*entry).value = value
		c.order.MoveToFront(el)
		return
	}
	if c.order.Len() >= c.cap {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.items, last.Value.(*entry).key)
	}
	c.items[key] = c.order.PushFront(&entry{key, value})
}

// Len is the number of entries.
func (c *LRU) Len() int { return c.order.Len() }
