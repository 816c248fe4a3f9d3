// esbuild's keepNames wraps functions and classes in `__name(target, "name")`, which redefines `name` with
// Object.defineProperty. V8 then moves the function or class to slow (dictionary) properties, for good: in the bundle
// that was ~2,400 of them, Express's request and response methods, rxjs's subscribers and Nest's and TypeORM's
// classes among them, and it cost ~10% of the CPU of a lead (bench/RESULTS.md). This pass gives the same names the
// way the language does instead: a name JavaScript already infers from the position needs no call, and an anonymous
// function or class expression becomes a named one when that name cannot shadow anything it refers to. What is left
// (function declarations that esbuild renamed, Babel and library helpers: 1,297 of 10,061 calls) keeps its `__name` call.
import * as acorn from 'acorn';
import { applyEdits } from './text-edits.mjs';

const PARSE = { ecmaVersion: 'latest', sourceType: 'module' };

/** The name JavaScript itself gives an anonymous function or class at this position (NamedEvaluation). */
function inferredName(parent, node) {
  switch (parent.type) {
    case 'VariableDeclarator':
      return parent.init === node && parent.id.type === 'Identifier' ? parent.id.name : undefined;
    case 'AssignmentExpression':
      return parent.operator === '=' && parent.right === node && parent.left.type === 'Identifier' ? parent.left.name : undefined;
    case 'AssignmentPattern':
      return parent.right === node && parent.left.type === 'Identifier' ? parent.left.name : undefined;
    case 'Property':
    case 'PropertyDefinition': {
      if (parent.value !== node || parent.computed || (parent.kind && parent.kind !== 'init')) return undefined;
      const key = parent.key.type === 'Identifier' ? parent.key.name : String(parent.key.value);
      // `{ __proto__: f }` sets the prototype and names nothing
      return key === '__proto__' && parent.type === 'Property' && !parent.shorthand ? undefined : key;
    }
    default:
      return undefined;
  }
}

const isAnonymous = (node) => (node.type === 'FunctionExpression' || node.type === 'ClassExpression' || node.type === 'ArrowFunctionExpression') && !node.id;

/** Whether the node refers to an identifier `name` anywhere inside (a named expression would capture it). */
function mentions(node, name) {
  if (!node || typeof node.type !== 'string') return false;
  if (node.type === 'Identifier') return node.name === name;
  for (const key in node) {
    if (key === 'type') continue;
    // property names and labels are not references
    if (key === 'label' || (key === 'property' && node.type === 'MemberExpression' && !node.computed)) continue;
    if (key === 'key' && !node.computed && !node.shorthand) continue;
    const child = node[key];
    if (Array.isArray(child) ? child.some((item) => mentions(item, name)) : mentions(child, name)) return true;
  }
  return false;
}

/** `async function*`, `function` or `class`: the text before where a name goes. */
function headOf(code, node) {
  const head = /^(?:async\s*)?function\s*\*?|^class/.exec(code.slice(node.start, node.start + 20));
  if (!head) throw new Error(`restore-names: unexpected ${node.type} at ${node.start}`);
  return head[0];
}

/**
 * The head after which `name` can go, when it may name this function or class expression: a valid binding there, and
 * no reference to it inside to capture. Undefined when it may not.
 */
function headForName(code, node, name) {
  if (!/^[A-Za-z_$][\w$]*$/.test(name) || mentions(node, name)) return undefined;
  const head = headOf(code, node);
  try {
    acorn.parse(`(${head} ${name}${node.type === 'ClassExpression' ? '{}' : '(){}'});`, PARSE);
    return head;
  } catch {
    return undefined;
  }
}

function nameEdits(code) {
  const edits = [];
  const remove = (start, end, text = '') => edits.push([start, end, text]);
  const unwrap = (call, target) => {
    remove(call.start, target.start, '(');
    remove(target.end, call.end, ')');
  };
  const nameIt = (node, name, head) => remove(node.start, node.start + head.length, `${head} ${name}`);
  let kept = 0;

  const visit = (node, parents) => {
    if (node.type === 'CallExpression' && node.callee.type === 'Identifier' && node.callee.name === '__name') {
      const [target, literal] = node.arguments;
      const name = literal?.value;
      const parent = parents.at(-1);
      let head;
      if (typeof name !== 'string') {
        kept++;
      } else if (target.type === 'Identifier' && target.name === name) {
        // a declaration that kept its name: nothing to do (`;` keeps an `if (c) __name(f, "f");` an if)
        if (parent.type === 'ExpressionStatement') remove(parent.start, parent.end, ';');
        else remove(node.start, node.end, name);
      } else if (isAnonymous(target) && [name, ...(target.type === 'ArrowFunctionExpression' ? [undefined] : [])].includes(inferredName(parent, node))) {
        // the position names it; an arrow where the position names nothing stays nameless, as the helper left it
        unwrap(node, target);
      } else if (target.type === 'FunctionExpression' && !target.id && (head = headForName(code, target, name))) {
        unwrap(node, target);
        nameIt(target, name, head);
      } else if (
        target.type === 'ThisExpression' &&
        parent.type === 'ExpressionStatement' &&
        parents.at(-2)?.type === 'StaticBlock' &&
        parents.at(-2).body.length === 1
      ) {
        // `static{__name(this,"X")}` as the first thing in a class body
        const block = parents.at(-2);
        const cls = parents.at(-4);
        const own = cls.id?.name ?? inferredName(parents.at(-5), cls);
        if (own === name) remove(block.start, block.end);
        else if (!cls.id && (head = headForName(code, cls, name))) {
          remove(block.start, block.end);
          nameIt(cls, name, head);
        } else kept++;
      } else {
        kept++;
      }
    }
    parents.push(node);
    for (const key in node) {
      const child = node[key];
      if (Array.isArray(child)) {
        for (const item of child) if (item && typeof item.type === 'string') visit(item, parents);
      } else if (child && typeof child.type === 'string' && key !== 'type') visit(child, parents);
    }
    parents.pop();
  };
  visit(acorn.parse(code, PARSE), []);
  return { edits, kept };
}

/**
 * Rewrites keepNames output, and its source map when given one (scripts/release/text-edits.mjs); the result parses, and
 * every function and class has the name keepNames gave it. `kept` counts the `__name` calls left.
 */
export function restoreNames(code, map) {
  const { edits, kept } = nameEdits(code);
  const out = applyEdits(code, edits, map);
  acorn.parse(out.code, PARSE);
  return { ...out, kept };
}
