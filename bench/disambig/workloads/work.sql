-- The sqlite3 workload of the disambiguation benchmark: inserts, an index, joins, updates, deletes.
CREATE TABLE item(id INTEGER PRIMARY KEY, name TEXT, grp INTEGER, price REAL);
CREATE TABLE grp(id INTEGER PRIMARY KEY, label TEXT);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
  INSERT INTO item SELECT i, printf('item%05d', i), i % 97, (i * 37 % 1000) / 10.0 FROM n;
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 96)
  INSERT INTO grp SELECT i, 'group ' || i FROM n;
CREATE INDEX item_grp ON item(grp, price);
SELECT g.label, count(*), avg(i.price), max(i.name) FROM item i JOIN grp g ON g.id = i.grp
  GROUP BY g.id ORDER BY 3 DESC LIMIT 5;
UPDATE item SET price = price * 1.1 WHERE grp IN (SELECT id FROM grp WHERE label LIKE '%7');
DELETE FROM item WHERE id % 5 = 0;
SELECT count(*), sum(length(name)), group_concat(DISTINCT grp) IS NOT NULL FROM item;
SELECT name FROM item WHERE name GLOB 'item1*9' ORDER BY price, name LIMIT 3;
