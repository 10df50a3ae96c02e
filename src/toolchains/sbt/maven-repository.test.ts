import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chooseRepository, discoverMavenRepository, mirrorMatches, parseMirrors, parseRepositories } from './maven-repository.js';
import { sbtRepositoriesFileContent } from './repositories-file.js';

const central = { id: 'central', url: 'https://central.example.test/maven2' };

describe('Maven mirror rules', () => {
  it('matches ids, *, external:* and exclusions as Maven does', () => {
    assert.equal(mirrorMatches('*', central), true);
    assert.equal(mirrorMatches('central', central), true);
    assert.equal(mirrorMatches('other,central', central), true);
    assert.equal(mirrorMatches('external:*', central), true);
    assert.equal(mirrorMatches('external:*', { id: 'local', url: 'http://localhost:8081/repo' }), false);
    assert.equal(mirrorMatches('external:*', { id: 'files', url: 'file:///srv/repo' }), false);
    assert.equal(mirrorMatches('external:http:*', central), false);
    assert.equal(mirrorMatches('external:http:*', { id: 'old', url: 'http://old.example.test/repo' }), true);
    assert.equal(mirrorMatches('*,!central', central), false);
    assert.equal(mirrorMatches('other', central), false);
  });

  it('parses mirrors, ignoring commented-out ones', () => {
    const settings = `<settings><mirrors>
      <!-- <mirror><id>old</id><mirrorOf>*</mirrorOf><url>https://old.test/</url></mirror> -->
      <mirror><id>blocker</id><mirrorOf>external:http:*</mirrorOf><url>http://0.0.0.0/</url><blocked>true</blocked></mirror>
      <mirror><url>https://mirror.test/maven?a=1&amp;b=2</url><mirrorOf>central</mirrorOf><id>company</id></mirror>
    </mirrors></settings>`;
    assert.deepEqual(parseMirrors(settings), [
      { id: 'blocker', mirrorOf: 'external:http:*', url: 'http://0.0.0.0/', blocked: true },
      { id: 'company', mirrorOf: 'central', url: 'https://mirror.test/maven?a=1&b=2', blocked: false },
    ]);
  });

  it('prefers an unblocked mirror of central, else central itself', () => {
    const blocker = { id: 'blocker', mirrorOf: '*', url: 'http://0.0.0.0/', blocked: true };
    const company = { id: 'company', mirrorOf: 'external:*', url: 'https://mirror.test/maven', blocked: false };
    assert.deepEqual(chooseRepository(central, [blocker]), { url: central.url, source: `Maven's central repository (id "central")` });
    assert.equal(chooseRepository(central, [blocker, company]).url, 'https://mirror.test/maven');
  });

  it('reads repositories from help:evaluate output', () => {
    const out = `<repositories>
  <org.apache.maven.model.Repository>
    <releases><enabled>true</enabled></releases>
    <id>central</id>
    <name>Central Repository</name>
    <url>https://central.example.test/maven2</url>
  </org.apache.maven.model.Repository>
</repositories>`;
    assert.deepEqual(parseRepositories(out), [central]);
  });

  it('writes an sbt repositories file with local and the chosen repository only', () => {
    assert.equal(
      sbtRepositoriesFileContent('https://mirror.test/maven'),
      '[repositories]\n  local\n  machine-maven: https://mirror.test/maven/\n',
    );
    assert.throws(() => sbtRepositoriesFileContent('https://mirror.test/a b'));
  });
});

describe("the machine's Maven repository (real mvn)", () => {
  it('is an http(s) URL read from Maven, with where it came from', async () => {
    const repository = await discoverMavenRepository();
    const url = new URL(repository.url);
    assert.match(url.protocol, /^https?:$/);
    assert.match(repository.source, /Maven mirror|central repository/);
  });
});
