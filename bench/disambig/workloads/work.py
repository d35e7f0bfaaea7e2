# The python3 workload of the disambiguation benchmark: build and parse 20k JSON entries.
import json, re, collections
entries = [{"id": i, "name": "user%05d" % i, "tags": ["t%d" % (i % 7), "g%d" % (i % 13)],
            "score": (i * 37) % 1000 / 10.0, "nested": {"a": [i, i + 1], "b": None}} for i in range(20000)]
text = json.dumps(entries, sort_keys=True)
back = json.loads(text)
tags = collections.Counter(t for e in back for t in e["tags"])
best = sorted(back, key=lambda e: (-e["score"], e["name"]))[:5]
words = len(re.findall(r'"user(\d+)"', text))
print(len(text), len(tags), best[0]["id"], words)
