/**
 * The public API of an entry point as text, one declaration a line (members indented), from the
 * TypeScript compiler's view of what the entry exports: what a user can import and how each
 * thing is typed. test/api/api-report.test.ts compares it with the report checked in under api/.
 */
import ts from 'typescript';

const FORMAT =
  ts.TypeFormatFlags.NoTruncation |
  ts.TypeFormatFlags.UseSingleQuotesForStringLiteralType |
  ts.TypeFormatFlags.WriteArrayAsGenericType;

/** The program over the given entry files, with the project's compiler options. */
export function apiProgram(entries: readonly string[], tsconfig: string): ts.Program {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    tsconfig,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
      },
    },
  );
  if (!parsed) throw new Error(`cannot read ${tsconfig}`);
  return ts.createProgram({ rootNames: [...entries], options: { ...parsed.options, noEmit: true } });
}

/** The export surface of one entry file, sorted by name. */
export function apiSurface(program: ts.Program, entry: string): string {
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(entry);
  if (!source) throw new Error(`${entry} is not in the program`);
  const moduleSymbol = checker.getSymbolAtLocation(source);
  if (!moduleSymbol) throw new Error(`${entry} has no exports`);
  const lines: string[] = [];
  const exports = [...checker.getExportsOfModule(moduleSymbol)].sort((a, b) => a.name.localeCompare(b.name));
  for (const exported of exports) {
    const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
    lines.push(...describe(checker, exported.name, symbol));
  }
  return `${lines.join('\n')}\n`;
}

function describe(checker: ts.TypeChecker, name: string, symbol: ts.Symbol): string[] {
  const lines: string[] = [];
  const flags = symbol.flags;
  if (flags & ts.SymbolFlags.Class) {
    lines.push(`class ${name}${typeParameters(checker, symbol)}`);
    const classType = checker.getTypeOfSymbol(symbol);
    for (const signature of classType.getConstructSignatures())
      lines.push(`  constructor${checker.signatureToString(signature, undefined, FORMAT)}`);
    lines.push(...members(checker, checker.getDeclaredTypeOfSymbol(symbol)));
    for (const property of classType.getProperties()) {
      if (property.name === 'prototype' || !isPublic(property)) continue;
      lines.push(
        `  static ${property.name}: ${checker.typeToString(checker.getTypeOfSymbol(property), undefined, FORMAT)}`,
      );
    }
    return lines;
  }
  if (flags & ts.SymbolFlags.Function) {
    const type = checker.getTypeOfSymbol(symbol);
    for (const signature of type.getCallSignatures())
      lines.push(`function ${name}${checker.signatureToString(signature, undefined, FORMAT)}`);
    return lines;
  }
  if (flags & ts.SymbolFlags.Interface) {
    lines.push(`interface ${name}${typeParameters(checker, symbol)}`);
    lines.push(...members(checker, checker.getDeclaredTypeOfSymbol(symbol)));
    return lines;
  }
  if (flags & ts.SymbolFlags.TypeAlias) {
    const type = checker.getDeclaredTypeOfSymbol(symbol);
    lines.push(
      `type ${name}${typeParameters(checker, symbol)} = ${checker.typeToString(type, undefined, FORMAT | ts.TypeFormatFlags.InTypeAlias)}`,
    );
    if (type.isIntersection() || (type.flags & ts.TypeFlags.Object && !(type.getCallSignatures().length > 0)))
      lines.push(...members(checker, type));
    return lines;
  }
  if (flags & ts.SymbolFlags.Variable) {
    lines.push(`const ${name}: ${checker.typeToString(checker.getTypeOfSymbol(symbol), undefined, FORMAT)}`);
    return lines;
  }
  return [`${ts.SymbolFlags[flags] ?? flags} ${name}`];
}

/** `<T, U = X>` of a generic declaration, as written. */
function typeParameters(_checker: ts.TypeChecker, symbol: ts.Symbol): string {
  const declaration = symbol.declarations?.find(
    (node): node is ts.ClassDeclaration | ts.InterfaceDeclaration | ts.TypeAliasDeclaration =>
      ts.isClassDeclaration(node) || ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node),
  );
  const parameters = declaration?.typeParameters;
  return parameters && parameters.length > 0 ? `<${parameters.map((p) => p.getText()).join(', ')}>` : '';
}

/** Public properties and methods, sorted, each with its type. */
function members(checker: ts.TypeChecker, type: ts.Type): string[] {
  return checker
    .getPropertiesOfType(type)
    .filter(isPublic)
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((property) => {
      const optional = property.flags & ts.SymbolFlags.Optional ? '?' : '';
      const declaration = property.valueDeclaration ?? property.declarations?.[0];
      const readonly =
        declaration && ts.getCombinedModifierFlags(declaration) & ts.ModifierFlags.Readonly
          ? 'readonly '
          : '';
      const propertyType = checker.getTypeOfSymbol(property);
      return `  ${readonly}${property.name}${optional}: ${checker.typeToString(propertyType, undefined, FORMAT)}`;
    });
}

function isPublic(property: ts.Symbol): boolean {
  if (property.name.startsWith('#') || property.name.startsWith('__')) return false;
  const declaration = property.valueDeclaration ?? property.declarations?.[0];
  if (!declaration) return true;
  const modifiers = ts.getCombinedModifierFlags(declaration);
  return !(modifiers & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected));
}
