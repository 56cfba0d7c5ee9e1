/**
 * Names and file roles agree (issue #35 point 3): a file named `<name>.<role>.ts` exports a class whose name ends
 * with the role (`consumer.repository.ts` → `ConsumerRepository`, `key-cache.service.ts` → `…Service`), so that a
 * reader finds a class from its file name and the other way round. A file whose class plays no such role drops the
 * role from its name (`audit-log.ts`).
 */
const ROLES = {
  repository: 'Repository',
  service: 'Service',
  controller: 'Controller',
  guard: 'Guard',
  module: 'Module',
  entity: 'Entity',
  interceptor: 'Interceptor',
  filter: 'Filter',
  pipe: 'Pipe',
};

export const fileRole = {
  meta: {
    type: 'problem',
    docs: { description: 'A <name>.<role>.ts file exports a class named …<Role>.' },
    schema: [],
    messages: {
      missing:
        '{{file}} is a {{role}} file: it must export a class whose name ends with "{{suffix}}" (found: {{found}}).',
    },
  },
  create(context) {
    const file = context.filename.split(/[\\/]/).pop();
    const match = /^[a-z0-9-]+\.([a-z]+)\.ts$/.exec(file);
    const suffix = match && ROLES[match[1]];
    if (!suffix) return {};
    const exported = [];
    return {
      'ExportNamedDeclaration > ClassDeclaration, ExportDefaultDeclaration > ClassDeclaration'(node) {
        if (node.id) exported.push(node.id.name);
      },
      'Program:exit'(program) {
        if (exported.some((name) => name.endsWith(suffix))) return;
        context.report({
          node: program,
          messageId: 'missing',
          data: { file, role: match[1], suffix, found: exported.join(', ') || 'no exported class' },
        });
      },
    };
  },
};

export default { rules: { 'file-role': fileRole } };
