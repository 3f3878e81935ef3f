import { bundleReadme, CASES } from '/work/main/bench/src/bundle/readme-bundles.ts';
for (const c of CASES) {
  const b = await bundleReadme(c);
  console.log(c.name, b.min, b.gzip, JSON.stringify(b.packages.slice(0, 5)));
}
