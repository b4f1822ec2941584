using System.Text;

namespace Broker.Core.Internal.Clients;

/// <summary>Go's <c>%q</c> formatting of a subject, as nats-server puts it in permission errors.</summary>
internal static class GoQuote
{
    public static string Quote(ReadOnlySpan<byte> value)
    {
        var text = Encoding.UTF8.GetString(value);
        var builder = new StringBuilder(text.Length + 2);
        builder.Append('"');
        foreach (var c in text)
        {
            switch (c)
            {
                case '"': builder.Append("\\\""); break;
                case '\\': builder.Append("\\\\"); break;
                case '\n': builder.Append("\\n"); break;
                case '\r': builder.Append("\\r"); break;
                case '\t': builder.Append("\\t"); break;
                default:
                    if (char.IsControl(c))
                    {
                        builder.Append("\\x").Append(((int)c).ToString("x2", System.Globalization.CultureInfo.InvariantCulture));
                    }
                    else
                    {
                        builder.Append(c);
                    }

                    break;
            }
        }

        return builder.Append('"').ToString();
    }
}
