package templater

import "sort"

// latestTag is templatekw.getlatesttags's cache entry: the tagged
// changeset's date, the distance to it, and its tags.
type latestTag struct {
	date int64
	dist int
	tags []string
}

// latestTags is templatekw.getlatesttags for rev (no pattern): the global
// tags of the most recent globally tagged ancestor, found by the same
// walk (and, at a merge whose parents reach different tags, the same
// choice: fewest changes since the tag, then the later date).
func (sc *scope) latestTags(rev int) (latestTag, error) {
	env := sc.env
	if env.latest == nil {
		env.latest = map[int]latestTag{-1: {0, 0, []string{"null"}}}
	}
	cache := env.latest
	r := env.Repo
	todo := []int{rev}
	for len(todo) > 0 {
		rev := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if _, ok := cache[rev]; ok {
			continue
		}
		var tags []string
		named, err := r.NodeTags(r.Node(rev))
		if err != nil {
			return latestTag{}, err
		}
		for _, t := range named {
			if tt := r.TagType(t); tt != "" && tt != "local" {
				tags = append(tags, t)
			}
		}
		cs, err := r.Changeset(rev)
		if err != nil {
			return latestTag{}, err
		}
		if len(tags) > 0 {
			sort.Strings(tags)
			cache[rev] = latestTag{cs.Time, 0, tags}
			continue
		}
		p1, p2 := r.Parents(rev)
		parents := []int{p1}
		if p2 >= 0 {
			parents = append(parents, p2)
		}
		var ptags []latestTag
		miss := false
		for _, p := range parents {
			t, ok := cache[p]
			if !ok {
				miss = true
				break
			}
			ptags = append(ptags, t)
		}
		if miss {
			todo = append(todo, rev)
			todo = append(todo, parents...)
			continue
		}
		best := ptags[0]
		if len(ptags) > 1 {
			a, b := ptags[0], ptags[1]
			if equalStrings(a.tags, b.tags) {
				// max() of the tuples (date, distance, tags).
				if b.date > a.date || b.date == a.date && b.dist > a.dist {
					best = b
				}
			} else {
				ka, err := sc.changesSince(rev, a.tags[0])
				if err != nil {
					return latestTag{}, err
				}
				kb, err := sc.changesSince(rev, b.tags[0])
				if err != nil {
					return latestTag{}, err
				}
				// max by [-changessince, date]; the first on a tie.
				if -kb > -ka || -kb == -ka && b.date > a.date {
					best = b
				}
			}
		}
		cache[rev] = latestTag{best.date, best.dist + 1, best.tags}
	}
	return cache[rev], nil
}

// changesSince is len(repo.revs('only(%d, %s)', rev, tag)): rev's
// ancestors (itself included) that are not the tag's. The tag's
// ancestors are cached per tag.
func (sc *scope) changesSince(rev int, tag string) (int, error) {
	r := sc.env.Repo
	if sc.env.tagAncestors == nil {
		sc.env.tagAncestors = map[string]map[int]bool{}
	}
	stop, ok := sc.env.tagAncestors[tag]
	if !ok {
		t, err := r.Lookup(tag)
		if err != nil {
			return 0, err
		}
		stop = ancestorSet(r.Parents, t, nil)
		sc.env.tagAncestors[tag] = stop
	}
	return len(ancestorSet(r.Parents, rev, stop)), nil
}

// ancestorSet is rev and its ancestors, not walking into stop.
func ancestorSet(parents func(int) (int, int), rev int, stop map[int]bool) map[int]bool {
	seen := map[int]bool{}
	stack := []int{rev}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if x < 0 || seen[x] || stop[x] {
			continue
		}
		seen[x] = true
		p1, p2 := parents(x)
		stack = append(stack, p1, p2)
	}
	return seen
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
