using System.Reflection;
using System.Text;

namespace Broker.Core.Tests.Api;

/// <summary>
/// Prints an assembly's public surface (types and their public and protected members) one declaration per line,
/// sorted, so a change to the contract shows up as a diff of a checked-in file.
/// </summary>
internal static class PublicApiPrinter
{
    private const BindingFlags Declared = BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.Instance | BindingFlags.Static | BindingFlags.DeclaredOnly;

    public static string Print(Assembly assembly)
    {
        var lines = new List<string>();
        foreach (var type in assembly.GetExportedTypes())
        {
            lines.Add(DescribeType(type));
            foreach (var member in type.GetMembers(Declared))
            {
                if (IsVisible(member) && !member.Name.StartsWith('<') && Describe(type, member) is { } text)
                {
                    lines.Add(text);
                }
            }
        }

        lines.Sort(StringComparer.Ordinal);
        return string.Join('\n', lines) + "\n";
    }

    private static string DescribeType(Type type)
    {
        var kind = type.IsEnum ? "enum" : type.IsInterface ? "interface" : type.IsValueType ? "struct" : typeof(Delegate).IsAssignableFrom(type) ? "delegate" : "class";
        var modifiers = type.IsClass && type.IsAbstract && type.IsSealed ? "static " : type.IsClass && type.IsSealed && kind == "class" ? "sealed " : type.IsClass && type.IsAbstract && !type.IsInterface ? "abstract " : string.Empty;
        var bases = new List<string>();
        if (type.BaseType is { } baseType && baseType != typeof(object) && baseType != typeof(ValueType) && baseType != typeof(Enum) && baseType != typeof(MulticastDelegate))
        {
            bases.Add(Name(baseType));
        }

        bases.AddRange(type.GetInterfaces().Select(Name).Order(StringComparer.Ordinal));
        return $"{modifiers}{kind} {Name(type)}{(bases.Count > 0 ? " : " + string.Join(", ", bases) : string.Empty)}";
    }

    private static bool IsVisible(MemberInfo member) => member switch
    {
        MethodBase method => (method.IsPublic || method.IsFamily || method.IsFamilyOrAssembly) && !method.IsSpecialName || method is ConstructorInfo { IsPublic: true } || method is ConstructorInfo { IsFamily: true },
        PropertyInfo property => property.GetAccessors(nonPublic: true).Any(a => a.IsPublic || a.IsFamily || a.IsFamilyOrAssembly),
        FieldInfo field => (field.IsPublic || field.IsFamily) && !field.IsSpecialName,
        EventInfo e => e.AddMethod is { } add && (add.IsPublic || add.IsFamily),
        Type nested => nested.IsNestedPublic || nested.IsNestedFamily,
        _ => false,
    };

    private static string? Describe(Type owner, MemberInfo member)
    {
        var prefix = Name(owner) + ".";
        switch (member)
        {
            case ConstructorInfo ctor:
                return $"{prefix}{Name(owner)}({Parameters(ctor)})";
            case MethodInfo method:
                var modifiers = (method.IsStatic ? "static " : string.Empty) + (method.IsAbstract && !owner.IsInterface ? "abstract " : method.IsVirtual && !method.IsFinal && !owner.IsInterface ? "virtual " : string.Empty);
                var generic = method.IsGenericMethod ? "<" + string.Join(", ", method.GetGenericArguments().Select(a => a.Name)) + ">" : string.Empty;
                return $"{modifiers}{prefix}{method.Name}{generic}({Parameters(method)}) -> {Name(method.ReturnType)}";
            case PropertyInfo property:
                var accessors = (property.GetMethod is { } g && (g.IsPublic || g.IsFamily) ? "get; " : string.Empty)
                    + (property.SetMethod is { } s && (s.IsPublic || s.IsFamily) ? (s.ReturnParameter.GetRequiredCustomModifiers().Any(m => m.Name == "IsExternalInit") ? "init; " : "set; ") : string.Empty);
                var staticText = property.GetAccessors(true).Any(a => a.IsStatic) ? "static " : string.Empty;
                var indexer = property.GetIndexParameters() is { Length: > 0 } p ? "[" + string.Join(", ", p.Select(x => Name(x.ParameterType))) + "]" : string.Empty;
                return $"{staticText}{prefix}{property.Name}{indexer} {{ {accessors}}} -> {Name(property.PropertyType)}";
            case FieldInfo field:
                if (owner.IsEnum)
                {
                    return field.IsStatic ? $"{prefix}{field.Name} = {field.GetRawConstantValue()}" : null;
                }

                return $"{(field.IsLiteral ? "const " : field.IsStatic ? "static " : string.Empty)}{(field.IsInitOnly ? "readonly " : string.Empty)}{prefix}{field.Name} -> {Name(field.FieldType)}";
            case EventInfo e:
                return $"event {prefix}{e.Name} -> {Name(e.EventHandlerType!)}";
            default:
                return null;
        }
    }

    private static string Parameters(MethodBase method) => string.Join(", ", method.GetParameters().Select(p =>
        (p.IsIn ? "in " : p.IsOut ? "out " : p.ParameterType.IsByRef ? "ref " : string.Empty) + Name(p.ParameterType) + " " + p.Name
        + (p.HasDefaultValue ? " = " + (p.DefaultValue ?? "null") : string.Empty)));

    private static string Name(Type type)
    {
        if (type.IsByRef)
        {
            return Name(type.GetElementType()!);
        }

        if (type.IsArray)
        {
            return Name(type.GetElementType()!) + "[]";
        }

        if (Nullable.GetUnderlyingType(type) is { } underlying)
        {
            return Name(underlying) + "?";
        }

        var name = type.IsGenericParameter ? type.Name : (type.DeclaringType is { } declaring && !type.IsGenericParameter ? Name(declaring) + "." : type.Namespace + ".") + type.Name;
        if (type.IsGenericType)
        {
            name = name[..name.IndexOf('`', StringComparison.Ordinal)] + "<" + string.Join(", ", type.GetGenericArguments().Select(Name)) + ">";
        }

        return name;
    }
}
