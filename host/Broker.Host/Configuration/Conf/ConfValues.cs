using System.Globalization;

namespace Broker.Host.Configuration.Conf;

/// <summary>
/// A value of a parsed nats-server configuration: a <see cref="ConfMap"/>, a <see cref="ConfArray"/>
/// or one of the scalars (<see cref="ConfString"/>, <see cref="ConfInteger"/>, <see cref="ConfFloat"/>,
/// <see cref="ConfBool"/>, <see cref="ConfDateTime"/>). Every value knows where it was written.
/// </summary>
/// <remarks>
/// A value reached through a <c>$variable</c> carries the position of the reference, not of the
/// definition, so errors about it point where the user used it; the children of a referenced map or
/// array keep their own positions.
/// </remarks>
internal abstract class ConfValue
{
    private protected ConfValue(ConfPosition position) => Position = position;

    /// <summary>Where the value starts in its source (its opening quote, bracket or <c>$</c> included).</summary>
    public ConfPosition Position { get; }

    /// <summary>A short name of the kind of value for error messages: "string", "integer", "map", ...</summary>
    public abstract string TypeName { get; }

    /// <summary>A copy of this value that claims another position; children are shared, not copied.</summary>
    internal abstract ConfValue WithPosition(ConfPosition position);
}

/// <summary>An ordered list of values, written <c>[a, b]</c> or one value per line.</summary>
internal sealed class ConfArray : ConfValue
{
    /// <summary>Creates an array over <paramref name="items"/>; the list is not copied.</summary>
    public ConfArray(IReadOnlyList<ConfValue> items, ConfPosition position)
        : base(position) => Items = items;

    /// <summary>The elements in source order.</summary>
    public IReadOnlyList<ConfValue> Items { get; }

    /// <inheritdoc/>
    public override string TypeName => "array";

    /// <inheritdoc/>
    internal override ConfValue WithPosition(ConfPosition position) => new ConfArray(Items, position);

    /// <inheritdoc/>
    public override string ToString() => "[" + string.Join(", ", Items) + "]";
}

/// <summary>Text: bare, quoted, a <c>( ... )</c> block, an IP address or anything else not typed.</summary>
internal sealed class ConfString : ConfValue
{
    /// <summary>Creates a string value.</summary>
    public ConfString(string value, ConfPosition position)
        : base(position) => Value = value;

    /// <summary>The text with escapes already applied.</summary>
    public string Value { get; }

    /// <inheritdoc/>
    public override string TypeName => "string";

    /// <inheritdoc/>
    internal override ConfValue WithPosition(ConfPosition position) => new ConfString(Value, position);

    /// <inheritdoc/>
    public override string ToString() => Value;
}

/// <summary>A whole number, size suffixes (<c>1k</c>, <c>1MB</c>, ...) already applied.</summary>
internal sealed class ConfInteger : ConfValue
{
    /// <summary>Creates an integer value.</summary>
    public ConfInteger(long value, ConfPosition position)
        : base(position) => Value = value;

    /// <summary>The number.</summary>
    public long Value { get; }

    /// <inheritdoc/>
    public override string TypeName => "integer";

    /// <inheritdoc/>
    internal override ConfValue WithPosition(ConfPosition position) => new ConfInteger(Value, position);

    /// <inheritdoc/>
    public override string ToString() => Value.ToString(CultureInfo.InvariantCulture);
}

/// <summary>A number written with a decimal point (<c>0.5</c>); it always starts with a digit.</summary>
internal sealed class ConfFloat : ConfValue
{
    /// <summary>Creates a float value.</summary>
    public ConfFloat(double value, ConfPosition position)
        : base(position) => Value = value;

    /// <summary>The number.</summary>
    public double Value { get; }

    /// <inheritdoc/>
    public override string TypeName => "float";

    /// <inheritdoc/>
    internal override ConfValue WithPosition(ConfPosition position) => new ConfFloat(Value, position);

    /// <inheritdoc/>
    public override string ToString() => Value.ToString("R", CultureInfo.InvariantCulture);
}

/// <summary>A boolean, written <c>true/false/yes/no/on/off</c> in any letter case and unquoted.</summary>
internal sealed class ConfBool : ConfValue
{
    /// <summary>Creates a boolean value.</summary>
    public ConfBool(bool value, ConfPosition position)
        : base(position) => Value = value;

    /// <summary>The truth value.</summary>
    public bool Value { get; }

    /// <inheritdoc/>
    public override string TypeName => "boolean";

    /// <inheritdoc/>
    internal override ConfValue WithPosition(ConfPosition position) => new ConfBool(Value, position);

    /// <inheritdoc/>
    public override string ToString() => Value ? "true" : "false";
}

/// <summary>An ISO-8601 instant in full Zulu form, <c>2016-05-04T18:53:41Z</c>.</summary>
internal sealed class ConfDateTime : ConfValue
{
    /// <summary>Creates a date-time value; <paramref name="value"/> should be UTC.</summary>
    public ConfDateTime(DateTime value, ConfPosition position)
        : base(position) => Value = value;

    /// <summary>The instant, of kind <see cref="DateTimeKind.Utc"/>.</summary>
    public DateTime Value { get; }

    /// <inheritdoc/>
    public override string TypeName => "datetime";

    /// <inheritdoc/>
    internal override ConfValue WithPosition(ConfPosition position) => new ConfDateTime(Value, position);

    /// <inheritdoc/>
    public override string ToString() => Value.ToString("yyyy-MM-dd'T'HH:mm:ss'Z'", CultureInfo.InvariantCulture);
}
