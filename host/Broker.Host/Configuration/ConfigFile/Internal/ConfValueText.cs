using System.Globalization;
using Broker.Host.Configuration.Conf;

namespace Broker.Host.Configuration.ConfigFile.Internal;

/// <summary>Values as configuration keys hold them: the text the configuration binder reads back exactly.</summary>
internal static class ConfValueText
{
    /// <summary>An integer, invariant.</summary>
    public static string Format(long value) => value.ToString(CultureInfo.InvariantCulture);

    /// <summary><c>true</c> or <c>false</c>.</summary>
    public static string Format(bool value) => value ? "true" : "false";

    /// <summary>TimeSpan's invariant form.</summary>
    public static string Format(TimeSpan value) => value.ToString("c", CultureInfo.InvariantCulture);

    /// <summary>A scalar as a plugin reads it from configuration: text as is, numbers invariant, booleans true/false.</summary>
    public static string Scalar(ConfValue value) => value switch
    {
        ConfString text => text.Value,
        ConfInteger number => Format(number.Value),
        ConfFloat number => number.Value.ToString("R", CultureInfo.InvariantCulture),
        ConfBool flag => Format(flag.Value),
        ConfDateTime time => time.Value.ToString("O", CultureInfo.InvariantCulture),
        _ => value.ToString() ?? "",
    };

    /// <summary>The Go type nats-server's parser gives a value, as Go prints it in messages.</summary>
    public static string GoType(ConfValue value) => value switch
    {
        ConfString => "string",
        ConfInteger => "int64",
        ConfFloat => "float64",
        ConfBool => "bool",
        ConfMap => "map[string]interface {}",
        ConfArray => "[]interface {}",
        ConfDateTime => "time.Time",
        _ => value.TypeName,
    };

    /// <summary>
    /// Go's <c>%q</c> of a value, as nats-server prints it in some messages: a string in double quotes, an integer as
    /// the character it stands for in single quotes, anything else as Go's <c>%!q(type=value)</c>.
    /// </summary>
    public static string GoQuoted(ConfValue value) => value switch
    {
        ConfString text => "\"" + text.Value.Replace("\\", "\\\\", StringComparison.Ordinal).Replace("\"", "\\\"", StringComparison.Ordinal) + "\"",
        ConfInteger number => GoQuotedRune(number.Value),
        _ => $"%!q({GoType(value)}={value})",
    };

    private static string GoQuotedRune(long rune) => rune switch
    {
        '\'' or '\\' => $"'\\{(char)rune}'",
        >= 0x20 and < 0x7F => $"'{(char)rune}'",
        >= 0 and < 0x80 => $"'\\x{rune:x2}'",
        >= 0 and <= 0xFFFF and not (>= 0xD800 and <= 0xDFFF) => $"'\\u{rune:x4}'",
        > 0xFFFF and <= 0x10FFFF => $"'\\U{rune:x8}'",
        _ => "'\uFFFD'",
    };
}
