/**
 * Identifiers: what a miss-rate check looks for in an agent's reply. An identifier is something the
 * agent could not have written without reading it: a path, a `file:line`, an error code, a qualified
 * or compound name, a long number, a hash, an exact string. If the agent writes one that was in its
 * raw context but not in what Spillway sent, the projection hid something it needed (a miss), and it
 * would have had to read it back; read-back costs (metrics.ts) are built on these misses.
 *
 * Two definitions are kept. `current` (issue 22, "Signals a user can trust") drops what any agent
 * writes from its own knowledge: punctuation fragments, dunders, language keywords and builtins,
 * well-known names and command names, JSON keys of its own tool calls, short bare numbers and
 * round ones. `before` is the definition the figures were first published under; the replay reports
 * both counts (`missedIdsBefore`), so a gain that only comes from counting differently is visible.
 */

/** A path: segments joined by slashes (see `isPath`), or a file name with a common source extension. */
const PATH =
  /(?:~|\.{1,2})?\/?(?:[\w.@-]+\/)+[\w.@-]+|\b[\w-]{2,}\.(?:py|ts|tsx|js|jsx|mjs|cjs|json|jsonl|md|rs|go|java|kt|rb|php|c|h|cc|cpp|hpp|cs|swift|sh|yml|yaml|toml|ini|cfg|txt|log|html|css|scss|sql|lock|xml|traj)\b/g;
/** `file:line` or `file:line:column`, the file a path or a name with an extension. */
const FILE_LINE = /(?:(?:~|\.{1,2})?\/?(?:[\w.@-]+\/)*[\w@-][\w.@-]*\.[A-Za-z][\w]{0,5}):\d+(?::\d+)?\b/g;
/** Error codes: compiler and linter codes (E0425, TS2345, SC2086), errno names, HTTP statuses. */
const ERROR_CODE =
  /\b(?:[A-Z]{1,4}\d{3,5})\b|\bE(?:NOENT|ACCES|EXIST|ISDIR|NOTDIR|NOTEMPTY|PERM|PIPE|AGAIN|BUSY|INVAL|MFILE|NFILE|NOSPC|NOMEM|NOTSUP|ROFS|XDEV|ADDRINUSE|ADDRNOTAVAIL|CONNREFUSED|CONNRESET|CONNABORTED|TIMEDOUT|HOSTUNREACH|NETUNREACH|CANCELED|PROTO|NOTCONN|BADF|SRCH|CHILD|DEADLK|LOOP|NAMETOOLONG|OVERFLOW)\b|\bHTTP[ /]\d{3}\b/g;
/** Dotted names: os.path.join, self.config, package.json. */
const DOTTED = /(?<![\w.$])[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+/g;
/** Words of letters, digits and underscores: kept if camelCase, PascalCase with an inner capital, snake_case or letters with digits. */
const WORD = /(?<![\w$])[A-Za-z_$][\w$]{2,}/g;
/** A number of three or more digits. */
const NUMBER = /(?<![\w.])\d{3,}(?![\w])/g;
/** A quoted string on one line: '…', "…" or `…`. */
const QUOTED = /(["'`])([^"'`\n\\]{3,120})\1/g;

/** Abbreviations that look like dotted names. */
const NOT_DOTTED = /^(?:e\.g|i\.e|etc|vs|a\.k\.a|cf|n\.b|p\.s)$/i;

/** A slash path is an identifier unless it is two plain words (and/or, input/output, I/O). */
function isPath(p: string): boolean {
  if (p.includes('/') && !/^[~./]/.test(p)) {
    const segs = p.split('/');
    if (segs.length === 2 && segs.every((s) => /^[A-Za-z]+$/.test(s))) return false;
  }
  return true;
}

/** Is this word an identifier (not a plain word): an inner capital, an underscore, or letters mixed with digits? */
export function isIdentifierWord(w: string): boolean {
  if (w.includes('_') || w.includes('$')) return /[A-Za-z0-9]/.test(w) && w.replace(/_/g, '').length >= 2;
  if (/[a-z][A-Z]/.test(w) || /[A-Z]{2}[a-z]{2}/.test(w)) return true; // camelCase, PascalCase, JSONDecoder
  if (/\d/.test(w) && /[A-Za-z]/.test(w)) return !/^\d+(?:st|nd|rd|th)$/i.test(w) && w.length >= 3;
  return false;
}

type Category = 'file-line' | 'path' | 'error-code' | 'dotted' | 'name' | 'number' | 'quoted';

/** Which definition of an identifier to apply (see the module comment). */
export type IdentifierDefinition = 'current' | 'before';

// ---------------------------------------------------------------------------------------------
// What the current definition drops

/** Language builtins with an inner capital: exceptions, JS/TS globals and methods, Rust and Java types. */
const BUILTIN_NAMES = new Set(
  [
    // Python exceptions and constants
    'BaseException Exception ArithmeticError AssertionError AttributeError BlockingIOError BrokenPipeError BufferError',
    'ConnectionError ConnectionRefusedError ConnectionResetError EOFError FileExistsError FileNotFoundError FloatingPointError',
    'GeneratorExit ImportError IndentationError IndexError InterruptedError IsADirectoryError KeyError KeyboardInterrupt',
    'LookupError MemoryError ModuleNotFoundError NameError NotADirectoryError NotImplemented NotImplementedError OSError',
    'OverflowError PermissionError ProcessLookupError RecursionError ReferenceError RuntimeError StopIteration',
    'StopAsyncIteration SyntaxError SystemError SystemExit TabError TimeoutError TypeError UnboundLocalError UnicodeError',
    'UnicodeDecodeError UnicodeEncodeError ValueError ZeroDivisionError DeprecationWarning FutureWarning UserWarning',
    'RuntimeWarning PendingDeprecationWarning ResourceWarning IOError',
    // JavaScript and TypeScript globals, DOM and Node basics
    'NaN RangeError EvalError URIError AggregateError ArrayBuffer DataView Float32Array Float64Array Int8Array Int16Array',
    'Int32Array Uint8Array Uint16Array Uint32Array BigInt WeakMap WeakSet WeakRef ReadonlyArray ReadonlyMap ReadonlySet',
    'PromiseLike ReturnType InstanceType NonNullable ConstructorParameters toString toFixed valueOf hasOwnProperty',
    'parseInt parseFloat isNaN setTimeout setInterval clearTimeout clearInterval setImmediate queueMicrotask forEach',
    'indexOf lastIndexOf toLowerCase toUpperCase startsWith endsWith padStart padEnd trimStart trimEnd flatMap findIndex',
    'addEventListener removeEventListener querySelector querySelectorAll getElementById createElement innerHTML textContent',
    'readFileSync writeFileSync existsSync mkdirSync readdirSync statSync unlinkSync rmSync appendFileSync',
    'useState useEffect useRef useMemo useCallback useContext',
    // Go, Rust, Java
    'HashMap HashSet BTreeMap BTreeSet VecDeque RefCell ToString AsRef ArrayList LinkedList LinkedHashMap TreeMap',
    'StringBuilder NullPointerException IllegalArgumentException IllegalStateException IndexOutOfBoundsException',
    'IOException RuntimeException ClassNotFoundException UnsupportedOperationException hashCode',
    // names of things, written with an inner capital but known to every agent
    'GitHub GitLab JavaScript TypeScript CoffeeScript PostgreSQL MySQL SQLite MongoDB MariaDB GraphQL WebSocket WebSockets',
    'WebAssembly YouTube LinkedIn OpenAI DeepSeek PyPI PyTorch TensorFlow NumPy SciPy FastAPI NodeJS VSCode PowerShell',
    'DevOps macOS iOS iPhone iPad WiFi OAuth CloudFlare DigitalOcean',
  ]
    .join(' ')
    .split(' '),
);

/** Words with digits that name a command, a version of one, a type or an encoding every agent knows. */
const KNOWN_DIGIT_WORD =
  /^(?:(?:python|pip|py|node|ruby|perl|php|java|gcc|clang|lua|bash|zsh|go|cargo|rustc|dotnet|swift)\d+(?:\.\d+)*|(?:u?int|float|complex|sha|md|base|utf|ucs|ipv|http|oauth|es|win|x|arm|amd|mp|h|aes|rsa|v|i|l)\d+(?:_\d+)?|x86_64|i18n|l10n|k8s|a11y|2fa)$/i;

/** Shell variables every agent knows. */
const SHELL_VARIABLES = new Set(['$HOME', '$PATH', '$PWD', '$USER', '$SHELL', '$TMPDIR', '$EDITOR', '$LANG', '$OLDPWD', '$HOSTNAME']);

/** Dotted names from the languages' standard libraries, written from memory. */
const BUILTIN_DOTTED = new Set(
  [
    'sys.exit sys.argv sys.path sys.path.insert sys.path.append sys.stdout sys.stderr sys.stdout.write sys.stderr.write',
    'sys.version sys.executable sys.modules os.path os.path.join os.path.exists os.path.dirname os.path.basename',
    'os.path.abspath os.path.isfile os.path.isdir os.path.splitext os.environ os.environ.get os.getenv os.getcwd os.listdir',
    'os.makedirs os.remove os.walk re.IGNORECASE re.MULTILINE re.DOTALL re.sub re.match re.search re.compile re.findall re.split json.loads json.dumps json.load',
    'json.dump time.sleep time.time datetime.now datetime.datetime.now subprocess.run subprocess.check_output',
    'subprocess.Popen subprocess.PIPE logging.getLogger collections.defaultdict collections.OrderedDict Path.home Path.cwd',
    'pytest.raises pytest.fixture pytest.mark pytest.mark.parametrize unittest.TestCase unittest.main unittest.mock',
    'self.assertEqual self.assertTrue self.assertFalse self.assertIn self.assertIsNone self.assertRaises self.assertIsInstance',
    'console.log console.error console.warn console.info console.debug JSON.parse JSON.stringify Object.keys',
    'Object.values Object.entries Object.assign Object.freeze Array.isArray Array.from Promise.all Promise.resolve',
    'Promise.reject Math.max Math.min Math.floor Math.ceil Math.round Math.abs Math.random Date.now Number.isInteger',
    'process.env process.exit process.argv process.cwd process.stdout process.stderr module.exports',
    'fmt.Println fmt.Printf fmt.Sprintf fmt.Errorf errors.New os.Exit System.out.println System.err.println String.valueOf',
  ]
    .join(' ')
    .split(' '),
);

/**
 * Qualified names from Java's standard library (`import java.util.List;`, `java.io.IOException`),
 * written from memory like the dotted names above; a project's own packages still count.
 */
const JAVA_STANDARD = /^javax?\.(?:lang|util|io|nio|net|time|math|text|sql|security|beans|rmi)(?:\.[A-Za-z_$][\w$]*)*$/;

/** Paths every agent writes without reading them: devices, interpreters, shell start-up files. */
const COMMON_PATHS = new Set([
  '/dev/null',
  '/dev/stdout',
  '/dev/stderr',
  '/dev/stdin',
  '/usr/bin/env',
  '/bin/bash',
  '/bin/sh',
  '/usr/bin/python',
  '/usr/bin/python3',
  '/usr/local/bin',
  '/usr/bin',
  '~/.bashrc',
  '~/.zshrc',
  '~/.profile',
]);

/** File names every project has, written from convention. */
const CONVENTIONAL_FILES = new Set([
  'README.md',
  'CHANGELOG.md',
  'CONTRIBUTING.md',
  'LICENSE.md',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'setup.py',
  'setup.cfg',
  'pyproject.toml',
  'requirements.txt',
  'Cargo.toml',
  'Cargo.lock',
  'go.mod',
  'go.sum',
]);

/** Algorithm, encoding and standard names that the error-code pattern also matches. */
const NOT_ERROR_CODE = /^(?:SHA|RSA|AES|MD|UTF|UCS|HTTP|IPV|ISO|DES|ECDSA|X|ES|P)\d+$/;

/** Quoted strings every agent writes: encodings. */
const COMMON_QUOTED = new Set(['utf-8', 'utf8', 'ascii', 'latin-1', 'utf-16']);

/**
 * The shortest bare number counted: four digits. Three-digit numbers are mostly statuses, limits and
 * counts an agent writes on its own (200, 255, 404, 500); a three-digit line it read shows up as a
 * `file:line`, or after "line" (see LOCATED_NUMBER), and is kept there.
 */
const MIN_NUMBER_DIGITS = 4;
/** "line 330", "lines 120-140", "L42", "#1234", "issue 812": a number that locates something. */
const LOCATED_NUMBER = /(?:\blines?\s?|\bL|#|\bissue\s|\bPR\s)$/i;
/** Powers of two and well-known ports: four-digit numbers any agent writes. */
const KNOWN_NUMBERS = new Set(['1024', '2048', '4096', '8192', '16384', '32768', '65536', '8080', '8443', '5432', '6379', '3306', '27017']);

/** A bare number of at least MIN_NUMBER_DIGITS that is not round (…00), a year or a known number, or any located one. */
function isCountedNumber(n: string, before: string): boolean {
  if (LOCATED_NUMBER.test(before)) return true;
  if (n.length < MIN_NUMBER_DIGITS || KNOWN_NUMBERS.has(n) || n.endsWith('00')) return false;
  const v = Number(n);
  return !(n.length === 4 && v >= 1900 && v <= 2099);
}

/**
 * A quoted string counts unless it is a fragment between two strings (`'a', errors='b'` gives
 * `, errors=`: a quote that closes a word, or one followed by a word), starts or ends with
 * punctuation or space (`| head -20`, `(e.g.,`), is prose of plain words (`Commit and push changes`,
 * `git status`) or a sentence (`Implement backend/rapl.rs for Intel RAPL reading`: the path in it
 * counts on its own), a lone command-line flag (`-lc`) or an encoding, or is on its own something the
 * current definition drops (`'__eq__'`, `"README.md"`, `'os.walk'`).
 */
function isCountedQuote(inner: string, text: string, start: number, end: number): boolean {
  if (/\w/.test(text[start - 1] ?? '') || /\w/.test(text[end] ?? '')) return false;
  if (/^[\s,;:|&<>()[\]{}=+*!?]|[\s,.|&<=+*(!?]$/.test(inner)) return false;
  if (/^[A-Za-z][A-Za-z'-]*(?: [A-Za-z][A-Za-z'-]*)+$/.test(inner) && !inner.split(' ').some(isIdentifierWord)) return false;
  // a sentence (a capitalised plain word, then two or more words): the agent's own todo or description
  if (/^[A-Z][a-z]+(?: \S+){2,}$/.test(inner)) return false;
  if (/^--?[A-Za-z][\w-]*$/.test(inner)) return false;
  if (COMMON_QUOTED.has(inner.toLowerCase()) || isKnownName(inner) || isBuiltinDotted(inner)) return false;
  return !COMMON_PATHS.has(inner) && !CONVENTIONAL_FILES.has(inner);
}

/** Receivers that name nothing of the project: `self.__eq__` is the method `__eq__`. */
const PLAIN_RECEIVERS = new Set(['self', 'cls', 'this', 'module', 'super']);

/**
 * Is a dotted name one of the standard library's, a method of a one-letter local (`f.read`,
 * `s.strip`), or made only of plain receivers and dunders (`self.__eq__`, `module.__name__`)?
 */
function isBuiltinDotted(id: string): boolean {
  if (BUILTIN_DOTTED.has(id) || JAVA_STANDARD.test(id)) return true;
  const segs = id.split('.');
  if (segs.length === 2 && segs[0]!.length === 1) return true;
  return segs.every((x) => PLAIN_RECEIVERS.has(x) || /^__\w+__$/.test(x));
}

/** Is this name one any agent writes from knowledge: a dunder, a builtin, a known command or type, a shell variable? */
function isKnownName(id: string): boolean {
  return /^__\w+__$/.test(id) || BUILTIN_NAMES.has(id) || KNOWN_DIGIT_WORD.test(id) || SHELL_VARIABLES.has(id);
}

/**
 * Replies hold tool-call arguments as JSON text: `\n`, `\t` and `\"` are escapes there, not text
 * (`\nTo` is a newline and "To", not the name `nTo`). Turned back into the characters they stand for.
 */
function unescapeJson(text: string): string {
  return text.replace(/\\([nrt"\\])/g, (_, c: string) => (c === 'n' ? '\n' : c === 'r' ? '\r' : c === 't' ? '\t' : c));
}

/** Does the current definition keep this candidate? */
function counts(id: string, category: Category, text: string, start: number, end: number): boolean {
  switch (category) {
    case 'path':
      // `console.log` has the look of a file name
      return !COMMON_PATHS.has(id) && !CONVENTIONAL_FILES.has(id) && !isBuiltinDotted(id);
    case 'error-code':
      return !NOT_ERROR_CODE.test(id);
    case 'dotted':
      return !isBuiltinDotted(id) && !/^"\s*:/.test(text.slice(end, end + 3));
    case 'name':
      // a key of the agent's own tool-call JSON (`"file_path":`) comes from the tool's schema
      return !isKnownName(id) && !/^"\s*:/.test(text.slice(end, end + 3));
    case 'number':
      return isCountedNumber(id, text.slice(Math.max(0, start - 8), start));
    case 'quoted':
      return isCountedQuote(id, text, start - 1, end + 1);
    default:
      return true;
  }
}

// ---------------------------------------------------------------------------------------------
// Finding them

/**
 * The identifiers in a reply (unique, in order of category then appearance). Candidates: a path, a
 * `file:line`, an error code (E0425, TS2345, ENOENT, HTTP 404), a dotted name, a camelCase,
 * PascalCase-with-inner-capital or snake_case name, a word mixing letters and digits, a number of
 * three or more digits, and a quoted string that is not a single plain word. Plain words (lowercase
 * or Capitalised, no digits, underscores, dots or inner capitals) and all-capital words (API, JSON)
 * are never identifiers. A match inside a path, `file:line` or dotted name already taken is part of
 * it, not a second identifier. The `current` definition then drops what an agent knows without
 * reading (see `counts`); `before` keeps every candidate.
 */
export function identifiersIn(text: string, definition: IdentifierDefinition = 'current'): string[] {
  return identifiersWithCategory(text, definition).map((x) => x.id);
}

/** `identifiersIn` with the category each identifier was found as (tests and reports use it). */
export function identifiersWithCategory(raw: string, definition: IdentifierDefinition = 'current'): { id: string; category: Category }[] {
  const current = definition === 'current';
  const text = current ? unescapeJson(raw) : raw;
  const out: { id: string; category: Category }[] = [];
  const seen = new Set<string>();
  const spans: [number, number][] = [];
  const inside = (s: number, e: number) => spans.some(([a, b]) => s >= a && e <= b);
  const add = (id: string, category: Category, s: number, e: number, claims: boolean) => {
    if (inside(s, e)) return;
    if (claims) spans.push([s, e]);
    if (current && !counts(id, category, text, s, e)) return;
    if (!seen.has(id)) {
      seen.add(id);
      out.push({ id, category });
    }
  };
  for (const m of text.matchAll(FILE_LINE)) add(m[0], 'file-line', m.index, m.index + m[0].length, true);
  for (const m of text.matchAll(PATH)) {
    const id = m[0].replace(/[.,:;]+$/, '');
    if (id.length < 3 || /^[./]+$/.test(id) || !isPath(id)) continue;
    add(id, 'path', m.index, m.index + id.length, true);
  }
  for (const m of text.matchAll(ERROR_CODE)) add(m[0], 'error-code', m.index, m.index + m[0].length, true);
  for (const m of text.matchAll(DOTTED)) {
    const id = m[0].replace(/\.+$/, '');
    if (id.length < 4 || NOT_DOTTED.test(id) || !id.includes('.')) continue;
    add(id, 'dotted', m.index, m.index + id.length, true);
  }
  for (const m of text.matchAll(WORD)) if (isIdentifierWord(m[0])) add(m[0], 'name', m.index, m.index + m[0].length, false);
  for (const m of text.matchAll(NUMBER)) add(m[0], 'number', m.index, m.index + m[0].length, false);
  for (const m of text.matchAll(QUOTED)) {
    const inner = m[2]!.trim();
    // a single plain word in quotes is still a plain word; a JSON key is not a string the agent read
    if (inner.length < 3 || /^[A-Za-z]+$/.test(inner) || text[m.index + m[0].length] === ':') continue;
    if (current && !counts(m[2]!, 'quoted', text, m.index + 1, m.index + m[0].length - 1)) continue;
    if (!seen.has(inner)) {
      seen.add(inner);
      out.push({ id: inner, category: 'quoted' });
    }
  }
  return out;
}

export interface MissCheck {
  referenced: string[];
  missed: string[];
  /** the same two counts under the `before` definition */
  referencedBefore: number;
  missedBefore: number;
}

/**
 * Of the identifiers the agent wrote in its reply, those it could have taken from its context (they
 * occur in the original request) and, of those, the ones the projection no longer shows; with the
 * counts the `before` definition gives. Each identifier is looked up once for both.
 */
export function missedIdentifiers(reply: string, original: string, projected: string): MissCheck {
  const found = new Map<string, 'missed' | 'shown' | 'absent'>();
  const check = (id: string) => {
    let r = found.get(id);
    if (r === undefined) {
      r = !original.includes(id) ? 'absent' : projected.includes(id) ? 'shown' : 'missed';
      found.set(id, r);
    }
    return r;
  };
  const referenced: string[] = [];
  const missed: string[] = [];
  for (const id of identifiersIn(reply)) {
    const r = check(id);
    if (r === 'absent') continue;
    referenced.push(id);
    if (r === 'missed') missed.push(id);
  }
  let referencedBefore = 0,
    missedBefore = 0;
  for (const id of identifiersIn(reply, 'before')) {
    const r = check(id);
    if (r !== 'absent') referencedBefore++;
    if (r === 'missed') missedBefore++;
  }
  return { referenced, missed, referencedBefore, missedBefore };
}
