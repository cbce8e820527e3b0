// Finds every module specifier a source file depends on, with the TypeScript parser (not regexes), so
// comments and strings that merely mention a module are ignored and every import form is seen.
import ts from "typescript";

export interface ImportSite {
  specifier: string;
  line: number;
  column: number;
  kind:
    | "import"
    | "import type"
    | "export from"
    | "import()"
    | "require()"
    | "resolve()"
    | "import = require()";
}

export function findImports(fileName: string, text: string): ImportSite[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, scriptKind(fileName));
  const sites: ImportSite[] = [];
  const add = (literal: ts.Node, specifier: string, kind: ImportSite["kind"]) => {
    const { line, character } = source.getLineAndCharacterOfPosition(literal.getStart(source));
    sites.push({ specifier, line: line + 1, column: character + 1, kind });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      add(
        node.moduleSpecifier,
        node.moduleSpecifier.text,
        node.importClause?.isTypeOnly ? "import type" : "import",
      );
    } else if (
      ts.isExportDeclaration(node) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      add(node.moduleSpecifier, node.moduleSpecifier.text, "export from");
    } else if (
      ts.isImportEqualsDeclaration(node) &&
      ts.isExternalModuleReference(node.moduleReference) &&
      ts.isStringLiteral(node.moduleReference.expression)
    ) {
      add(node.moduleReference.expression, node.moduleReference.expression.text, "import = require()");
    } else if (ts.isImportTypeNode(node)) {
      // `typeof import("x")` / `import("x").T` in type positions.
      const argument = node.argument;
      if (ts.isLiteralTypeNode(argument) && ts.isStringLiteral(argument.literal)) {
        add(argument.literal, argument.literal.text, "import type");
      }
    } else if (ts.isCallExpression(node)) {
      const [first] = node.arguments;
      const literal = first !== undefined && ts.isStringLiteralLike(first) ? first : undefined;
      if (literal !== undefined) {
        const callee = node.expression;
        if (callee.kind === ts.SyntaxKind.ImportKeyword) add(literal, literal.text, "import()");
        else if (ts.isIdentifier(callee) && callee.text === "require")
          add(literal, literal.text, "require()");
        else if (
          ts.isPropertyAccessExpression(callee) &&
          callee.name.text === "resolve" &&
          (isRequire(callee.expression) || isImportMeta(callee.expression))
        ) {
          add(literal, literal.text, "resolve()");
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return sites;
}

function isRequire(node: ts.Expression): boolean {
  return ts.isIdentifier(node) && node.text === "require";
}

function isImportMeta(node: ts.Expression): boolean {
  return (
    ts.isMetaProperty(node) && node.keywordToken === ts.SyntaxKind.ImportKeyword && node.name.text === "meta"
  );
}

function scriptKind(fileName: string): ts.ScriptKind {
  if (fileName.endsWith(".tsx")) return ts.ScriptKind.TSX;
  if (fileName.endsWith(".jsx")) return ts.ScriptKind.JSX;
  if (/\.[mc]?js$/.test(fileName)) return ts.ScriptKind.JS;
  return ts.ScriptKind.TS;
}
